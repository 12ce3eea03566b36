"""``gnnca train`` dispatch on ``cfg["model"]["name"]``: the Transformer baseline or the bag GNN."""

from __future__ import annotations

from typing import Any


def train(cfg: dict[str, Any], resume: bool = False) -> dict[str, Any]:
    name = cfg.get("model", {}).get("name", "gnn")
    if name == "transformer":
        from .seq2seq import train as seq2seq_train  # the baseline developer's module, imported lazily

        return seq2seq_train(cfg, resume=resume)
    from .gnn import train_gnn

    return train_gnn(cfg, resume=resume)
