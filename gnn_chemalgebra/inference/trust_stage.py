"""The trust stage of prediction: a predictor's calibration sidecars, bound to the models that decode with it.

A calibration is valid for the checkpoint it was fitted on (:mod:`~gnn_chemalgebra.trust.binding`), and only with
the edit model (SMILES) and the Type-1 model (a formula pair) whose lines it measured, under the decode settings it
recorded. This module reads those off a predictor; :mod:`gnn_chemalgebra.trust` does the rest.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..config import DecodeConfig
from ..io import checkpoint_paths, sha256_cached
from ..trust.annotate import Trust, annotate_records
from ..trust.binding import StampedCache, bound_to_models
from ..trust.sidecar import sidecar_paths
from .prediction import LinePredictor, Prediction

if TYPE_CHECKING:
    from .options import Demands
    from .predict_sets import RunTrust
    from .predictor import Predictor

# decode settings that change no line a GNN writes: the sequence model's, and the Type-1 model's file name (its
# sha256 is bound apart, ``meta.type1_sha256``)
NOT_DECODING = frozenset({"beam", "max_len", "batch_size", "length_penalty", "type1_model"})
# the process's loaded sidecars, one per version of the files they depend on (owned here; tests may clear it)
LOADED_TRUST: StampedCache[Trust | None] = StampedCache()


def edit_model_path(predictor: LinePredictor) -> Path | None:
    """The bond-edit checkpoint a SMILES predictor decodes with: the one it was given, else the default
    (``$GNNCA_EDIT_CHECKPOINT`` or the bundled one); ``None`` for a formula predictor."""
    if predictor.repr != "smiles":
        return None
    src = predictor.source
    if src is not None and src.edit_checkpoint is not None:
        return Path(checkpoint_paths(str(src.edit_checkpoint))[0])
    from .edit_decode import default_checkpoint

    return default_checkpoint()


def edit_model_sha256(predictor: LinePredictor) -> str | None:
    """sha256 of :func:`edit_model_path` (``None`` when there is none): a SMILES calibration is only valid with
    the edit model whose product graphs it was fitted on."""
    path = edit_model_path(predictor)
    return None if path is None or not path.is_file() else sha256_cached(path)


def type1_model_path(predictor: LinePredictor) -> Path | None:
    """The checkpoint of a predictor's Type-1 model (``decode.type1_model``); ``None`` when it reads every line."""
    src = None if predictor.type1 is None else predictor.type1.source
    return None if src is None else Path(checkpoint_paths(str(src.checkpoint))[0])


def type1_model_sha256(predictor: LinePredictor) -> str | None:
    """sha256 of :func:`type1_model_path`: the Type-1 calibration belongs to the model that wrote those lines."""
    path = type1_model_path(predictor)
    return None if path is None else sha256_cached(path)


def decode_settings(settings: DecodeConfig) -> dict[str, object]:
    """The decode settings that shape the lines a GNN writes (a ``DecodeConfig`` less :data:`NOT_DECODING`)."""
    return {k: v for k, v in dataclasses.asdict(settings).items() if k not in NOT_DECODING}


def fitted_settings(predictor: Predictor) -> dict[str, dict[str, object]]:
    """What a calibration records of the decode settings it is fitted with (``meta.decode``, and
    ``meta.type1_decode`` for a Type-1 model)."""
    out = {"decode": decode_settings(predictor.settings)}
    t1 = predictor.type1
    if t1 is not None:
        out["type1_decode"] = decode_settings(t1.settings)
    return out


def changed_settings(predictor: Predictor, meta: Mapping[str, Any]) -> tuple[str, ...]:
    """The decode settings of ``predictor`` (and of its Type-1 model) that differ from those the calibration was
    fitted with: ``meta.decode`` / ``meta.type1_decode``, or, for a calibration that did not record them, the
    settings saved in the checkpoints (what ``gnnca bench calibration`` fits with unless told otherwise)."""
    out: list[str] = []
    pairs = [("decode", predictor)]
    if predictor.type1 is not None:
        pairs.append(("type1_decode", predictor.type1))
    for key, pred in pairs:
        want = meta.get(key)
        if want is None:
            saved = pred.saved_settings
            if saved is None:
                continue
            want = decode_settings(saved)
        now = decode_settings(pred.settings)
        prefix = "decode." if key == "decode" else "decode (Type-1 model)."
        out += [f"{prefix}{k}" for k in sorted(now) if k in want and now[k] != want[k]]
    return tuple(out)


def trust_for(predictor: LinePredictor) -> Trust | None:
    """The sidecars of the checkpoint a predictor was loaded from (``None``: built in memory, an ensemble, no
    sidecars, or fitted with another edit or Type-1 model than the ones this predictor decodes with)."""
    src = predictor.source
    if src is None:
        return None
    parts = checkpoint_paths(str(src.checkpoint))
    extra = [p for p in (edit_model_path(predictor), type1_model_path(predictor)) if p is not None]

    def load() -> Trust | None:
        trust = Trust.load_for(src.checkpoint)
        bound = trust is not None and bound_to_models(
            trust.meta, edit_model_sha256(predictor), type1_model_sha256(predictor)
        )
        return trust if bound else None

    trust = LOADED_TRUST.get([*parts, *sidecar_paths(parts[0]), *extra], load)
    if trust is None:
        return None
    changed = changed_settings(cast("Predictor", predictor), trust.meta)  # settings can change after loading
    return dataclasses.replace(trust, changed=changed) if changed else trust


def annotate_predictions(
    preds: Sequence[Prediction], trust: Trust | None, repr: str, top_k: int = 1, domain: bool = True
) -> None:
    """The trust stage of a batch: the calibrated confidence, the in-domain fields (``domain``) and the ``top_k``
    alternatives of each prediction, from the checkpoint's :class:`Trust` (``None``: the raw confidence, marked
    uncalibrated). The trust package reads the record it was fitted on (:meth:`Prediction.to_json`)."""
    records = [p.to_json() for p in preds]
    annotate_records(records, trust, repr, top_k, domain)
    for p, r in zip(preds, records, strict=True):
        p.with_trust(r)


class TrustStage:
    """The trust stage of one run, after decoding: each model's sidecars (read once), the calibrated confidence,
    the in-domain fields and the ``top_k`` alternatives of every prediction; after the rules stage, the run's
    conformal sets, and its out-of-domain abstention (:class:`~.predict_sets.RunTrust`). Writes no field where
    the run shows or uses no confidence (:attr:`~.options.Demands.trust`); the sidecars are read all the same (a
    changed file is refused). ``note``: where a missing calibration is said (once per model, where the confidence
    shows)."""

    def __init__(self, demands: Demands, sets: RunTrust, note: Callable[[str], None] | None = None) -> None:
        self.demands, self.sets, self.note = demands, sets, note
        self._trust: dict[int, Trust | None] = {}

    def check_model(self, model: LinePredictor) -> None:
        """Raise one line now when the run's sets have no fit for a model just loaded."""
        self.sets.check_model(model)

    def annotate(self, model: LinePredictor, preds: list[Prediction]) -> None:
        """The trust fields of a batch's predictions: the checkpoint's calibration and in-domain index when saved
        beside it, else the raw confidence marked uncalibrated."""
        if not preds:
            return
        key = id(model)
        if key not in self._trust:  # read (and its checksum checked) once per model, even where no field is written
            self._trust[key] = trust_for(model)
            if self._trust[key] is None and self.note is not None and self.demands.confidence:
                src = model.source
                self.note(
                    f"gnnca: note: no calibration for {src.checkpoint if src else 'this model'} (no .trust.json "
                    'beside it, or fitted with other models): the confidences are raw ("calibrated": false)'
                )
        d = self.demands
        if not d.trust:
            return
        annotate_predictions(preds, self._trust[key], model.repr, d.top_k, domain=d.domain)

    def add_sets(self, model: LinePredictor, preds: list[Prediction]) -> None:
        """The conformal sets of a batch's predictions (``--coverage``), once every line is written: after the
        rules stage, so that a line a rule wrote gets none (:meth:`~.predict_sets.ConformalSets.annotate`)."""
        if preds and self.demands.trust:
            self.sets.annotate(model, preds)
