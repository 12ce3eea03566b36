"""Which model reads a line (calibration kinds, by name in one registry), which calibrator each kind fits (by name
in another), and :class:`Calibrator`, one model per kind.

A sidecar stores each kind's model under the kind's stored key (the number it has always used), so sidecars
written before the kinds had names read the same. A model's JSON names its calibrator (``"calibrator"``); one
without the field is a ``linear`` one (every sidecar written before there was a choice).

Calibrators (:data:`CALIBRATORS`): ``linear``, the logistic regression of :mod:`.linear`; ``isotonic``, the
same score through a monotone map fitted on held-out scores (:mod:`.monotone`), which Type-2 lines fit: fitted on
in-distribution and shifted lines together, the linear shape alone is miscalibrated on both
(``experiments/shift.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..errors import InputError
from .candidates import Candidate, beam_share, in_rank_order
from .features import (
    ALT_FEATURES,
    FEATURES,
    FORMULA_CHECK_FEATURE,
    SECOND_OPINION_FEATURE,
    alternative_features,
    formula_check_agrees,
    record_features,
    second_opinion_agrees,
)
from .linear import LinearModel
from .monotone import IsotonicModel


class ConfidenceModel(Protocol):
    """What a calibrator fits: a probability per feature row, and its JSON."""

    def predict(self, X: np.ndarray) -> np.ndarray: ...

    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class CalibratorKind:
    """A calibrator chosen by name: how it is fitted (rows, 0/1 outcomes, L2 inverse strength) and read back."""

    name: str
    fit: Callable[[np.ndarray, np.ndarray, float], ConfidenceModel]
    from_json: Callable[[Mapping[str, Any]], ConfidenceModel]


CALIBRATORS: dict[str, CalibratorKind] = {}


def register_calibrator(c: CalibratorKind) -> str:
    if c.name in CALIBRATORS:
        raise ValueError(f"calibrator {c.name!r} is registered twice")
    CALIBRATORS[c.name] = c
    return c.name


LINEAR = register_calibrator(CalibratorKind("linear", LinearModel.fit, LinearModel.from_json))
ISOTONIC = register_calibrator(CalibratorKind("isotonic", IsotonicModel.fit, IsotonicModel.from_json))


def calibrator_named(name: str) -> CalibratorKind:
    """The calibrator registered as ``name``; one line when there is none."""
    if name not in CALIBRATORS:
        raise InputError(f"unknown calibrator {name!r} (known: {', '.join(sorted(CALIBRATORS))})")
    return CALIBRATORS[name]


def model_from_json(d: Mapping[str, Any]) -> ConfidenceModel:
    """A stored model, read by the calibrator its JSON names (``linear`` when it names none)."""
    return calibrator_named(str(d.get("calibrator", LINEAR))).from_json(d)


@dataclass(frozen=True)
class CalibrationKind:
    """A kind of line with a calibration model of its own."""

    name: str
    stored: int  # the key a calibration sidecar stores its model under (and a conformal fit its quantiles)
    what: str  # the lines it reads, for messages
    reads_instead: str | None = None  # the kind whose model reads these lines when this one has none
    second_opinion: bool = False  # its model reads :data:`~.features.SECOND_OPINION_FEATURE` too
    formula_check: bool = False  # its model reads :data:`~.features.FORMULA_CHECK_FEATURE` too
    calibrator: str = LINEAR  # the calibrator a fit uses for this kind (:data:`CALIBRATORS`)

    def features(self, rec: Mapping[str, Any]) -> list[float]:
        """The feature row this kind's model reads for ``rec``."""
        return record_features(rec, self.second_opinion, self.formula_check)


KINDS: dict[str, CalibrationKind] = {}


def register_kind(kind: CalibrationKind) -> CalibrationKind:
    if kind.name in KINDS or any(k.stored == kind.stored for k in KINDS.values()):
        raise ValueError(f"calibration kind {kind.name!r} (stored as {kind.stored}) is registered twice")
    KINDS[kind.name] = kind
    return kind


TYPE1 = register_kind(CalibrationKind("type1", 1, "Type-1 lines")).name
TYPE2 = register_kind(CalibrationKind("type2", 2, "Type-2 lines", calibrator=ISOTONIC)).name
# a Type-2 line written with the limiting extent (a chemist's amounts): another line than the Bayes rule writes,
# right when its roles and by-products are (the gold reaction at the limiting extent)
LIMITING = register_kind(
    CalibrationKind("limiting", 3, "Type-2 lines written with --extent limiting", reads_instead=TYPE2)
).name
# a Type-1 line that carries a second opinion (the mixed model wrote the line too); its model reads one more
# feature, whether the two lines differ. A sidecar without a model of this kind reads such lines with the Type-1
# model, which measured the same written lines without that feature
SECOND_OPINION = register_kind(
    CalibrationKind("second_opinion", 4, "Type-1 lines with a second opinion", reads_instead=TYPE1, second_opinion=True)
).name
# a chemist's SMILES line read a second time in formulas (decode.formula_check); its model reads whether the line
# written has the formula model's formulas. A sidecar without it reads these lines with the kind of their line
FORMULA_CHECKED = register_kind(
    CalibrationKind(
        "formula_check", 5, "chemist's lines read again in formulas", reads_instead=TYPE1, formula_check=True
    )
).name


def kind_of_stored(key: str | int, where: str = "calibration sidecar") -> str:
    """The kind name a sidecar's stored key stands for; one line when no kind has that key."""
    for k in KINDS.values():
        if str(k.stored) == str(key):
            return k.name
    raise InputError(f"{where}: unknown calibration kind {key!r} (known: {sorted(k.stored for k in KINDS.values())})")


def calibration_kind(rec: Mapping[str, Any]) -> str:
    """Which calibration kind a record's line is: its line type, or :data:`LIMITING` for a Type-2 line written
    with the limiting extent."""
    lt = int(rec.get("line_type") or 1)
    if lt == 2:
        return LIMITING if rec.get("extent_rule") == "limiting" else TYPE2
    return TYPE1 if lt == 1 else kind_of_stored(lt, "prediction record")


def calibration_code(rec: Mapping[str, Any]) -> int:
    """The stored key of :func:`calibration_kind` (what conformal fits are keyed by)."""
    return KINDS[calibration_kind(rec)].stored


def model_kind(rec: Mapping[str, Any]) -> str:
    """The calibration model fitted for a record: :func:`calibration_kind`, or :data:`SECOND_OPINION` for a Type-1
    line with a second opinion, :data:`FORMULA_CHECKED` for a Type-1 line read again in formulas."""
    kind = calibration_kind(rec)
    if kind == TYPE1 and second_opinion_agrees(rec) is not None:
        return SECOND_OPINION
    return FORMULA_CHECKED if kind == TYPE1 and formula_check_agrees(rec) is not None else kind


def by_stored_order(names: Sequence[str] | set[str]) -> list[str]:
    return sorted(names, key=lambda n: KINDS[n].stored)


def raw_confidence(rec: Mapping[str, Any]) -> float:
    """The role head's joint probability of the roles written (0.0 for a fallback)."""
    c = rec.get("raw_confidence", rec.get("confidence"))
    return 0.0 if rec.get("fallback") or c is None else float(c)


@dataclass
class Calibrator:
    """One model per calibration kind for the written line (its kind's calibrator; keyed by kind name, in stored
    order), one :class:`LinearModel` for the alternatives, and what they were fitted on (files, lines, exact-match
    rate)."""

    top: dict[str, ConfidenceModel]
    alt: LinearModel | None = None
    fitted_on: dict[str, Any] = field(default_factory=dict)

    def confidence(self, records: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
        """(calibrated probability, whether a model of the line's kind was there) per record; a kind without its
        own model reads the one it :attr:`~CalibrationKind.reads_instead` (else the first model) and says
        ``calibrated: false``. A limiting Type-2 line without a model of its kind (a sidecar fitted before there
        was one) reads the Type-2 model; the extent rule check (:meth:`~.annotate.Trust.annotate_many`) then says
        it is not calibrated."""
        out = np.zeros(len(records))
        own = np.zeros(len(records), dtype=bool)
        by_kind: dict[str, list[int]] = {}
        for i, r in enumerate(records):
            by_kind.setdefault(model_kind(r), []).append(i)
        for kind, idx in by_kind.items():
            lt = kind if kind in self.top else (KINDS[kind].reads_instead or kind)
            model = self.top.get(lt) or next(iter(self.top.values()))
            out[idx] = model.predict(np.array([KINDS[lt].features(records[i]) for i in idx]))
            own[idx] = lt in self.top
        return out, own

    def alternatives(self, cands: Sequence[Candidate], top_conf: float) -> list[float]:
        """Probabilities of the candidate lines after the written one; their sum never exceeds 1 - top_conf."""
        if len(cands) < 2:
            return []
        if self.alt is None:
            return beam_share(cands, top_conf)
        X = np.array([alternative_features(cands[0][2], s, j, top_conf) for j, (_, _, s) in enumerate(cands[1:], 1)])
        return in_rank_order(self.alt.predict(X).tolist(), top_conf)

    def to_json(self) -> dict[str, Any]:
        return {
            "features": list(FEATURES),
            "top": {str(KINDS[k].stored): self.top[k].to_json() for k in by_stored_order(set(self.top))},
            "alt_features": list(ALT_FEATURES),
            **({"second_opinion_feature": SECOND_OPINION_FEATURE} if SECOND_OPINION in self.top else {}),
            **({"formula_check_feature": FORMULA_CHECK_FEATURE} if FORMULA_CHECKED in self.top else {}),
            "alt": None if self.alt is None else self.alt.to_json(),
            "fitted_on": self.fitted_on,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Calibrator:
        if list(d.get("features", [])) != list(FEATURES) or list(d.get("alt_features", [])) != list(ALT_FEATURES):
            raise InputError("calibration sidecar was written for other features; fit it again")
        top = {kind_of_stored(k): model_from_json(v) for k, v in d["top"].items()}
        alt = None if d.get("alt") is None else LinearModel.from_json(d["alt"])
        return cls(top, alt, dict(d.get("fitted_on", {})))
