"""Training loops, checkpoints, devices and logging."""
