"""Whole-line validation of the bag GNN during training, wired from above the training floor.

Training must not import inference (floors), yet the GNN's early-stopping metric is the EM of whole decoded
lines, which needs the predictor. So the one training entry, :func:`gnn_chemalgebra.training.run.train`, takes a
validator factory; this module builds it: ``train(cfg, resume=..., validator=predictor_validator)`` is how
``gnnca train`` and ``gnnca bench`` train any model (the tasks that do not take it validate themselves).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

LINE_METRICS = ("EM", "JAC", "F1", "mol_JAC", "mol_F1")


def predictor_validator(task: Any) -> Callable[[], dict[str, float]]:
    """For a built :class:`~gnn_chemalgebra.training.gnn.GNNTask`: a callable decoding its validation bags with
    the predictor (and, for SMILES, the paired bond-edit model of ``model.edit_checkpoint``) and scoring them."""
    from ..evaluation.metrics import evaluate_lines
    from .predictor import Predictor, load_edit_model

    edit = None  # SMILES: validate whole lines, new product graphs included, with the paired bond-edit model
    if task.repr == "smiles" and task.cfg.model.edit_checkpoint:
        edit = load_edit_model(str(task.cfg.model.edit_checkpoint), task.device)
    # the run's decode section: the checkpoint saves it, so the validated predictor is the one users get
    pred = Predictor(task.model, task.feat, task.vocab, task.vtype, task.device, edit=edit, settings=task.cfg.decode)
    ds, batch_size = task.val_ds, task.cfg.train.batch_size
    gold = [ex.tgt or "" for ex in ds.examples]

    def validate() -> dict[str, float]:
        pred.model.eval()
        lines = pred.predict_data(ds.examples, ds.data, batch_size)
        res = evaluate_lines(lines, gold, task.repr, "paper")
        return {k: res[k] for k in LINE_METRICS}

    return validate
