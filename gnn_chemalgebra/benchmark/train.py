"""The benchmark's one door to training: every stage trains through the engine's public entry point, here."""

from __future__ import annotations

from typing import Any


def train_model(cfg: Any, resume: bool = False) -> dict[str, Any]:
    """Train the model named by ``model.name`` (gnn, naive, edits, transformer) as ``gnnca train`` does: the GNN
    validates whole decoded lines (EM) with the predictor, injected from the inference floor."""
    from ..inference.validation import train

    return train(cfg, resume=resume)
