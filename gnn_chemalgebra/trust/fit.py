"""Fitting a checkpoint's trust on labelled validation records: the calibration models (never on test lines) and
the in-domain index of the training reactions (``meta-train.jsonl``), its threshold at a low quantile of the
validation lines' similarities. Predicting the records is the caller's (``gnnca bench calibration``)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from .calibrators import (
    KINDS,
    Calibrator,
    ConfidenceModel,
    by_stored_order,
    calibration_kind,
    calibrator_named,
    model_kind,
)
from .candidates import candidate_lines
from .coefficients import CoefficientRule, fit_rule
from .domain import DomainIndex
from .features import alternative_features
from .linear import LinearModel
from .outcomes import TrainingOutcomes


def fit_calibrator(
    records: Sequence[Mapping[str, Any]],
    labels: Sequence[bool],
    beam_labels: Sequence[Sequence[bool]] | None = None,
    repr: str = "formula",
    C: float = 1.0,
    fitted_on: Mapping[str, Any] | None = None,
    calibrators: Mapping[str, str] | None = None,
) -> Calibrator:
    """Fit on validation records and their exact-match outcomes (never on test lines). ``beam_labels``: per
    record, the outcome of each beam entry (for the alternatives' model; records need a beam > 1). A kind whose
    lines are all right (or all wrong) gets no model of its own: it reads another kind's, marked
    ``calibrated: false``. Type-1 records with a second opinion fit the Type-1 model (without it) and the
    second-opinion model (with it). Each kind fits its registered calibrator
    (:attr:`~.calibrators.CalibrationKind.calibrator`) unless ``calibrators`` names another for it."""
    y = np.asarray(labels, dtype=int)
    if len(records) != len(y):
        raise InputError(f"{len(records)} records but {len(y)} labels")
    top: dict[str, ConfidenceModel] = {}
    info: dict[str, Any] = dict(fitted_on or {})
    per_kind: dict[str, Any] = {}
    kinds = {calibration_kind(r) for r in records} | {model_kind(r) for r in records}
    for kind in by_stored_order(kinds):
        idx = [i for i, r in enumerate(records) if kind in (calibration_kind(r), model_kind(r))]
        stored = str(KINDS[kind].stored)  # the fit's description keeps the sidecar's keys
        per_kind[stored] = {"lines": len(idx), "EM": float(y[idx].mean())}
        if len(set(y[idx].tolist())) < 2:  # nothing to tell apart: this kind reads another kind's model
            per_kind[stored]["fitted"] = False
            continue
        X = np.array([KINDS[kind].features(records[i]) for i in idx])
        name = (calibrators or {}).get(kind, KINDS[kind].calibrator)
        top[kind] = calibrator_named(name).fit(X, y[idx], C)
        per_kind[stored]["calibrator"] = name
    if not top:  # no kind has both outcomes: nothing to calibrate
        what = "all right" if y.all() else "all wrong" if not y.any() else "all right or all wrong per line type"
        raise InputError(f"cannot fit a calibration on {len(y)} lines that are {what}")
    info["line_types"] = per_kind
    cal = Calibrator(top, None, info)
    if beam_labels is not None:
        _fit_alternatives(cal, records, beam_labels, repr, C, info)
    return cal


def _fit_alternatives(
    cal: Calibrator, records: Sequence[Mapping[str, Any]], beam_labels: Sequence[Sequence[bool]], repr: str,
    C: float, info: dict[str, Any],
) -> None:  # fmt: skip
    """The alternatives' model: whether the i-th distinct balanced line of the beam is the right one."""
    conf, _ = cal.confidence(records)
    rows, outs = [], []
    for rec, c, bl in zip(records, conf, beam_labels, strict=True):
        cands = candidate_lines(rec, repr)
        for j, (bi, _, s) in enumerate(cands[1:], 1):
            rows.append(alternative_features(cands[0][2], s, j, float(c)))
            outs.append(bool(bl[bi]) if bi is not None and bi < len(bl) else False)
    if len(set(outs)) == 2:
        cal.alt = LinearModel.fit(np.array(rows), np.array(outs, dtype=int), C)
        info["alternatives"] = {"lines": len(rows), "right": int(sum(outs))}


# --------------------------------------------------------------------------- the training reactions
def training_reactions(meta_files: Sequence[Path]) -> tuple[list[list[str]], set[str]]:
    """The consumed molecules of every training reaction (``nu`` < 0 in ``meta-train.jsonl``), and every molecule
    of those reactions."""
    sets: list[list[str]] = []
    mols: set[str] = set()
    for f in meta_files:
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                d = json.loads(line)
                sets.append([m for m, v in d["nu"] if v < 0])
                mols.update(d.get("k", {}))
                mols.update(m for m, _ in d["nu"])
    return sets, mols


def training_meta(train: Path, repr: str) -> list[Path]:
    """``meta-train.jsonl`` of the representation's Type-2 x1 variant (the Type-1 one has the same reactions)."""
    r = "S" if repr == "smiles" else "F"
    for v in (f"ChemAlgebra_{r}_T2_x1", f"ChemAlgebra_{r}_T1_x1"):
        f = train / v / "meta-train.jsonl"
        if f.is_file():
            return [f]
    raise InputError(f"no meta-train.jsonl of ChemAlgebra_{r}_T2_x1 or _T1_x1", path=str(train))


def fit_domain_index(
    train_meta: Sequence[Path], written: Sequence[dict[str, Any]], repr: str, quantile: float, max_sets: int,
    log: Callable,
) -> DomainIndex:  # fmt: skip
    """The in-domain index of the training reactions, its threshold at ``quantile`` of the validation lines'
    (``written``) nearest-set similarities."""
    t0 = time.perf_counter()
    sets, mols = training_reactions(train_meta)
    dom = DomainIndex.build(sets, mols, repr, max_sets=max_sets, info={"files": [str(f) for f in train_meta]})
    dom.outcomes = TrainingOutcomes.from_meta(train_meta, repr)
    sims = np.array([dom.check(r)[0] for r in written])
    dom.threshold = float(np.quantile(sims, quantile))
    dom.info.update(
        threshold_rule=f"{quantile:.0%} quantile of the nearest-set similarity of the {len(written)} validation lines",
        validation_in_domain=float(np.mean([dom.check(r)[1] for r in written])),
    )
    log(
        f"domain index: {dom.info['reactant_sets']} training reactant sets, {dom.info['kept']} fingerprints kept, "
        f"threshold {dom.threshold:.3f}, {time.perf_counter() - t0:.0f} s"
    )
    return dom


def training_max_coefficient(meta_files: Sequence[Path]) -> int:
    """The largest coefficient of the training lines (the ``k`` of each line of ``meta-train.jsonl``)."""
    big = 0
    for f in meta_files:
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                big = max(big, *(int(v) for v in json.loads(line).get("k", {}).values()), 0)
    if big == 0:
        raise InputError("no coefficient in the training lines", path=", ".join(str(f) for f in meta_files))
    return big


def fit_coefficient_rule(
    train_meta: Sequence[Path], shifted: Sequence[tuple[Mapping[str, Any], bool]], written: Sequence[Mapping[str, Any]],
    log: Callable = print,
) -> CoefficientRule:  # fmt: skip
    """The in-domain flag's coefficient rule (:mod:`.coefficients`): the training lines' largest coefficient, the
    extent threshold from the labelled shifted validation records; ``written`` (the in-distribution validation
    lines) must not be marked by it, which the log says."""
    rule = fit_rule(training_max_coefficient(train_meta), shifted)
    rule.info["validation_marked"] = sum(rule.note(r) is not None for r in written)
    i = rule.info
    log(
        f"coefficient rule: coefficients > {rule.max_coef}, extent posterior < {rule.extent_p:.3f}: marks "
        f"{i['marked']} of {i['lines']} shifted validation lines (EM in {i['EM_in']}, out {i['EM_out']}), "
        f"{i['validation_marked']} of {len(written)} validation lines"
    )
    return rule
