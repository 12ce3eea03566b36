"""``gnnca train`` dispatch on ``cfg["model"]["name"]``: the Transformer baseline or the bag GNN."""

from __future__ import annotations

from typing import Any

from ..config import Config, typed


def train(cfg: Config | dict[str, Any], resume: bool = False) -> dict[str, Any]:
    cfg = typed(cfg).to_dict()
    name = cfg["model"]["name"]
    if name == "transformer":
        from .seq2seq import train as seq2seq_train  # the baseline developer's module, imported lazily

        return seq2seq_train(cfg, resume=resume)
    if name == "edits":
        from .edits import train_edits

        return train_edits(cfg, resume=resume)
    from .gnn import train_gnn

    return train_gnn(cfg, resume=resume)
