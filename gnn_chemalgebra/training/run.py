"""The one way into training: :func:`train`, which ``gnnca train``, ``gnnca bench`` and library callers use.

``model.name`` picks the task from the model-kind registry (:data:`gnn_chemalgebra.kinds.KINDS`): the bag GNN
(``gnn``, ``naive``: :class:`.gnn.GNNTask`), the bond-edit model (``edits``: :class:`.edits.EditTask`) or the
Transformer baseline (``transformer``: :class:`.seq2seq.TransformerTask`); each owns its model, batches, loss and
validation metric, and the :class:`.engine.Trainer` runs it.

``validator`` adds metrics computed on a higher floor, for the tasks that take them: the GNN's whole-line EM needs
the predictor, so callers above the training floor pass
:func:`gnn_chemalgebra.inference.validation.predictor_validator` (``gnnca train`` does). Without it the GNN
early-stops on its validation loss.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..config import Config, typed
from ..kinds import KINDS, kind
from .engine import Trainer
from .task import Task, ValidatorFactory


def make_task(name: str) -> Task:
    """A fresh task for a model kind (imported when asked for: each pulls in its own model and data code)."""
    return kind(name).load_task()()


def train(
    config: Config | Mapping[str, Any],
    resume: bool = False,
    *,
    validator: ValidatorFactory | None = None,
    task: Task | None = None,
) -> dict[str, Any]:
    """Train the model of ``config`` (a :class:`Config` or its plain mapping), or continue from
    ``<run_dir>/last.pt`` with ``resume``; returns the run's summary (also ``<run_dir>/summary.json``).

    ``task``: a task built by the caller instead of the one ``model.name`` names (prebuilt edit-model examples,
    :class:`.edits.EditTask`; a task of one's own); a mapping without ``model.name`` then takes the task's.
    """
    name = task.name if task is not None and task.name in KINDS else None
    cfg = typed(config, model_name=name)
    return Trainer(task or make_task(cfg.model_name), cfg, validator).run(resume)
