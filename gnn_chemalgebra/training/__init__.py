"""Training: one entry, :func:`.run.train`, running a model's task (gnn, edits, seq2seq) on the engine's Trainer."""
