"""Inference: exact decoding of learned roles into balanced lines, and the predictor behind `gnnca predict`."""
