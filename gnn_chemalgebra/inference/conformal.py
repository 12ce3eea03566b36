"""Conformal prediction sets: from a line's ``top_k`` alternatives, the smallest set that holds the right line
with a stated probability.

Split conformal prediction (Vovk et al.; Angelopoulos and Bates, "A gentle introduction to conformal
prediction"): on ``n`` validation lines whose right answer is known, a *nonconformity score* says how badly the
right line ranked among the top-k alternatives (their calibrated probabilities). The
``ceil((n + 1) * coverage)``-th smallest of those scores is the quantile ``q``; a new line's set holds every
alternative whose score would be at most ``q``. When the new line and the validation lines are exchangeable
(drawn alike: same kind of reaction, same coefficients, same model and decode settings) the set holds the right
line with probability at least ``coverage``, and at most ``coverage + 1 / (n + 1)`` when the scores have no ties.

Two scores (:data:`SCORES`):

* ``lac`` (the default): ``1 - p(right line)``. The set is every alternative with probability at least ``1 - q``:
  the smallest mean set size for the coverage. A set can be empty: no alternative is probable enough.
* ``aps``: the probability of the right line plus that of every alternative ranked above it (cumulative). The
  set is the most probable alternatives while their running sum stays at most ``q``.

A line whose right answer is not among its top-k alternatives scores infinity: no set of those alternatives
holds it. When more than ``1 - coverage`` of the validation lines do so, ``q`` is infinite and the coverage
cannot be reached with that k: :func:`prediction_set` then gives ``None``, never a set that claims it.

The fitted quantiles live in a small JSON file (:class:`ConformalTable`), one entry per checkpoint (bound by its
sha256 and its calibration sidecar's), per line kind (Type 1, Type 2) and per k; fitting:
:mod:`gnn_chemalgebra.benchmark.conformal`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from .prediction import JsonObject, SetFields

FORMAT = 1
KIND = "gnnca-conformal"
SCORES = ("lac", "aps")
COVERAGES = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99)
_TOL = 1e-9  # probabilities are rounded to 4 decimals: a score equal to the quantile is in


def nonconformity(probabilities: Sequence[float], right: Sequence[bool], score: str = "lac") -> float:
    """The score of one line: ``probabilities`` of its top-k alternatives, most probable first, ``right`` whether
    each is the right line. Infinite when none is."""
    if score not in SCORES:
        raise InputError(f"conformal score must be one of {', '.join(SCORES)}, got {score!r}")
    for i, ok in enumerate(right):
        if ok:
            return 1.0 - float(probabilities[i]) if score == "lac" else float(sum(probabilities[: i + 1]))
    return math.inf


def conformal_quantile(scores: Sequence[float], coverage: float) -> float:
    """The ``ceil((n + 1) * coverage)``-th smallest score (infinite when that rank exceeds ``n`` or the score there
    is infinite: the coverage cannot be promised with these lines)."""
    if not 0.0 < coverage < 1.0:
        raise InputError(f"coverage must lie strictly between 0 and 1, got {coverage}")
    n = len(scores)
    rank = math.ceil((n + 1) * coverage)
    if n == 0 or rank > n:
        return math.inf
    return sorted(scores)[rank - 1]


def set_members(probabilities: Sequence[float], q: float, score: str = "lac") -> list[int]:
    """Indices of the alternatives (most probable first) whose score would be at most ``q``."""
    if math.isinf(q):
        return list(range(len(probabilities)))
    if score == "lac":
        return [i for i, p in enumerate(probabilities) if 1.0 - float(p) <= q + _TOL]
    out, total = [], 0.0
    for i, p in enumerate(probabilities):
        total += float(p)
        if total > q + _TOL:
            break
        out.append(i)
    return out


@dataclass
class KindFit:
    """The quantiles of one line kind of one checkpoint: ``quantiles[k][coverage]`` (``None``: infinite), and the
    fit's record (validation files, lines, lines whose right answer was outside the top-k per k)."""

    quantiles: dict[int, dict[float, float | None]]
    lines: int
    outside: dict[int, int] = field(default_factory=dict)
    files: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> JsonObject:
        return {
            "lines": self.lines,
            "files": self.files,
            "outside_top_k": {str(k): v for k, v in sorted(self.outside.items())},
            "quantiles": {
                str(k): {f"{c:g}": q for c, q in sorted(row.items())} for k, row in sorted(self.quantiles.items())
            },
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> KindFit:
        qs = {
            int(k): {float(c): (None if q is None else float(q)) for c, q in row.items()}
            for k, row in d["quantiles"].items()
        }
        outside = {int(k): int(v) for k, v in d.get("outside_top_k", {}).items()}
        return cls(qs, int(d["lines"]), outside, list(d.get("files", [])))


def fit_kind(
    rows: Sequence[tuple[Sequence[float], Sequence[bool]]],
    ks: Iterable[int],
    coverages: Iterable[float] = COVERAGES,
    score: str = "lac",
    files: Sequence[Mapping[str, Any]] = (),
) -> KindFit:
    """Quantiles of validation lines (``rows``: per line the top-K probabilities and whether each is right) for
    each k (a line's first k alternatives) and coverage."""
    quantiles: dict[int, dict[float, float | None]] = {}
    outside: dict[int, int] = {}
    for k in ks:
        scores = [nonconformity(list(p)[:k], list(r)[:k], score) for p, r in rows]
        outside[k] = sum(math.isinf(s) for s in scores)
        quantiles[k] = {}
        for c in coverages:
            q = conformal_quantile(scores, c)
            quantiles[k][c] = None if math.isinf(q) else round(q, 6)
    return KindFit(quantiles, len(rows), outside, [dict(f) for f in files])


@dataclass
class ModelFit:
    """The conformal fit of one checkpoint: which file (name, sha256, the sha256 of the calibration sidecar whose
    probabilities it read, or ``None``), its representation, and one :class:`KindFit` per line kind."""

    checkpoint: str
    checkpoint_sha256: str
    trust_sha256: str | None
    repr: str
    kinds: dict[int, KindFit]

    def to_json(self) -> JsonObject:
        return {
            "checkpoint": self.checkpoint,
            "checkpoint_sha256": self.checkpoint_sha256,
            "trust_sha256": self.trust_sha256,
            "repr": self.repr,
            "kinds": {str(k): v.to_json() for k, v in sorted(self.kinds.items())},
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ModelFit:
        kinds = {int(k): KindFit.from_json(v) for k, v in d["kinds"].items()}
        return cls(str(d["checkpoint"]), str(d["checkpoint_sha256"]), d.get("trust_sha256"), str(d["repr"]), kinds)


@dataclass
class ConformalTable:
    """The conformal sidecar: its format, the score, and one :class:`ModelFit` per checkpoint."""

    score: str
    models: list[ModelFit]
    fitted: dict[str, Any] = field(default_factory=dict)  # the command and settings of the fit

    def to_json(self) -> JsonObject:
        return {
            "format": FORMAT,
            "kind": KIND,
            "score": self.score,
            "fitted": self.fitted,
            "models": [m.to_json() for m in self.models],
        }

    @classmethod
    def load(cls, path: str | Path) -> ConformalTable:
        """Read a conformal sidecar; a missing, unreadable or foreign file is one :class:`InputError` line."""
        p = Path(path)
        if not p.is_file():
            raise InputError("conformal sidecar not found (fit one: gnnca bench conformal)", path=str(p))
        try:
            d = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"unreadable conformal sidecar: {exc}", path=str(p)) from None
        if not isinstance(d, dict) or d.get("kind") != KIND:
            raise InputError('not a conformal sidecar (no "kind": "gnnca-conformal")', path=str(p))
        if d.get("format") != FORMAT:
            raise InputError(f"conformal sidecar format {d.get('format')!r}, expected {FORMAT}", path=str(p))
        if d.get("score") not in SCORES:
            raise InputError(f"conformal sidecar score {d.get('score')!r}, expected one of {SCORES}", path=str(p))
        try:
            models = [ModelFit.from_json(m) for m in d["models"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed conformal sidecar: {exc!r}", path=str(p)) from None
        return cls(str(d["score"]), models, dict(d.get("fitted", {})))

    def for_checkpoint(self, sha256: str) -> ModelFit | None:
        return next((m for m in self.models if m.checkpoint_sha256 == sha256), None)


def sidecar_path(checkpoint: str | Path) -> Path:
    """``<checkpoint>.conformal.json``: where a checkpoint's conformal sidecar is looked for."""
    p = Path(checkpoint)
    return p.with_name(p.name + ".conformal.json")


def check_coverage(coverage: float, fit: ModelFit) -> None:
    """A coverage the sidecar has quantiles for (one line naming those it has, otherwise)."""
    have = sorted({c for kf in fit.kinds.values() for row in kf.quantiles.values() for c in row})
    if not any(math.isclose(coverage, c) for c in have):
        raise InputError(
            f"--coverage {coverage:g} was not fitted for {fit.checkpoint}; fitted: {', '.join(f'{c:g}' for c in have)}"
        )


def annotate_sets(
    records: Sequence[JsonObject], fit: ModelFit, coverage: float, k: int, score: str
) -> Sequence[JsonObject]:
    """Write ``prediction_set`` (the set's lines with their probabilities, most probable first) and ``set_size``
    into each record, from its ``top_k`` rows (the first ``k``). ``None`` for both, with ``conformal_note``
    saying why, when the set cannot be stated: a line kind without a fit, a k or coverage not fitted, an
    unreachable coverage, or a confidence measured under other settings than the fit's."""
    from ..trust.calibrators import calibration_code

    for r in records:
        r["prediction_set"], r["set_size"] = None, None
        note = _why_no_set(r, fit, coverage, k)
        if note is not None:
            r["conformal_note"] = note
            continue
        q = _quantile(fit.kinds[calibration_code(r)], k, coverage)
        rows = (r.get("top_k") or [])[:k]
        members = set_members([float(x["probability"]) for x in rows], q, score)  # type: ignore[arg-type]
        r["prediction_set"] = [
            {"prediction": rows[i]["prediction"], "probability": rows[i]["probability"]} for i in members
        ]
        r["set_size"] = len(members)
    return records


def _quantile(kf: KindFit, k: int, coverage: float) -> float | None:
    row = kf.quantiles.get(k, {})
    return next((q for c, q in row.items() if math.isclose(c, coverage)), None)


def _why_no_set(r: Mapping[str, Any], fit: ModelFit, coverage: float, k: int) -> str | None:
    from ..trust.calibrators import KINDS, calibration_kind

    if r.get("calibration_note"):
        return "the confidence is not the one the sets were fitted on: " + str(r["calibration_note"])
    kind = KINDS[calibration_kind(r)]
    kf = fit.kinds.get(kind.stored)
    if kf is None:
        return f"no conformal fit for {kind.what} of {fit.checkpoint}"
    if k not in kf.quantiles:
        return f"no conformal fit for top-k {k} (fitted: {', '.join(str(x) for x in sorted(kf.quantiles))})"
    if _quantile(kf, k, coverage) is None:
        out = kf.outside.get(k, 0)
        return (
            f"coverage {coverage:g} cannot be reached with top-k {k}: the right line was outside the top {k} on "
            f"{out} of {kf.lines} validation lines"
        )
    return None


def text_line(sets: SetFields | None) -> str:
    """A line's set as a text output line: its size, then each line and its probability, tab separated
    (``2<TAB>line1<TAB>0.8123<TAB>line2<TAB>0.1201``); ``0`` for an empty set, ``NA`` when no set can be stated."""
    members = None if sets is None else sets.members
    if members is None:
        return "NA"
    return "\t".join([str(len(members)), *(f"{m.prediction}\t{float(m.probability):.4f}" for m in members)])
