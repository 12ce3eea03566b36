"""Dispatch on ``model.name`` to the task trained by the engine: the bag GNN (``gnn``, ``naive``), the
bond-edit model (``edits``) or the Transformer baseline (``transformer``).

``validator`` adds metrics computed on a higher floor (the GNN's whole-line EM); callers above the training
floor get it from :func:`gnn_chemalgebra.inference.validation.train`, which is what ``gnnca train`` runs.
"""

from __future__ import annotations

from typing import Any

from ..config import Config, typed
from .engine import ValidatorFactory, fit


def make_task(name: str) -> Any:
    """The training task of a model name (imported lazily: each pulls in its own model and data code)."""
    if name == "transformer":
        from .seq2seq import TransformerTask

        return TransformerTask()
    if name == "edits":
        from .edits import EditTask

        return EditTask()
    from .gnn import GNNTask

    return GNNTask()


def train(
    cfg: Config | dict[str, Any], resume: bool = False, validator: ValidatorFactory | None = None
) -> dict[str, Any]:
    cfg = typed(cfg)
    return fit(make_task(cfg.model_name), cfg, resume=resume, validator=validator)
