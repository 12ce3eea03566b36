"""The in-domain flag's coefficient rule: a Type-2 line written with the benchmark's extent rule (``bayes``) whose
coefficients exceed the training lines' largest and whose extent the evidence does not settle.

A Type-2 line's extent is read from its coefficients through the benchmark's prior; the network never reads a
coefficient's magnitude, so a line with coefficients the training lines never had (6-10 in ``test_out``) gets the
same roles but an extent read where the model's evidence was never checked. Where the extent posterior's largest
value is low as well, the written line is mostly wrong: :class:`CoefficientRule` marks those lines out of domain.
Its threshold is fitted on shifted validation lines (the valid reactions written with the out-of-set
coefficients, ``experiments/shift_split.py``) so that at most a set share of them is marked
(:func:`fit_threshold`). A chemist's amounts (``--extent limiting``) and Type-1 lines, whose line does not depend
on the magnitude, are never marked by it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..chem.bag import parse_bag
from ..errors import ChemAlgebraError

MARKED_SHARE = 0.10  # the most a fitted rule marks of the shifted validation lines it reads


def largest_coefficient(rec: Mapping[str, Any]) -> int | None:
    """The largest coefficient of a record's source line (``None`` when it does not parse)."""
    try:
        terms = parse_bag(str(rec.get("source") or ""))
    except ChemAlgebraError:
        return None
    return max((t.coef for t in terms), default=None)


def extent_top(rec: Mapping[str, Any]) -> float:
    """The extent posterior's largest value (1.0 without a posterior: nothing to settle)."""
    post = rec.get("extent_posterior") or []
    return float(max(post)) if post else 1.0


def applies(rec: Mapping[str, Any], max_coef: int) -> bool:
    """Whether the rule reads a record: a Type-2 line written with the ``bayes`` rule, a coefficient above
    ``max_coef``, not a fallback."""
    if int(rec.get("line_type") or 1) != 2 or rec.get("extent_rule") != "bayes" or rec.get("fallback"):
        return False
    big = largest_coefficient(rec)
    return big is not None and big > max_coef


@dataclass
class CoefficientRule:
    """Out of domain: :func:`applies` and the extent posterior's largest value below ``extent_p``."""

    max_coef: int  # the training lines' largest coefficient
    extent_p: float  # fitted on shifted validation lines
    info: dict[str, Any] = field(default_factory=dict)

    def note(self, rec: Mapping[str, Any]) -> str | None:
        if not applies(rec, self.max_coef):
            return None
        p = extent_top(rec)
        if p >= self.extent_p:
            return None
        return (
            f"coefficients above the training lines' largest ({self.max_coef}) and an unsettled extent "
            f"(posterior {p:.2f} < {self.extent_p:.2f})"
        )

    def to_json(self) -> dict[str, Any]:
        return {"max_coef": self.max_coef, "extent_p": self.extent_p, "info": self.info}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> CoefficientRule:
        return cls(int(d["max_coef"]), float(d["extent_p"]), dict(d.get("info", {})))


def fit_threshold(tops: Sequence[float], share: float = MARKED_SHARE) -> float:
    """The largest threshold among the values ``tops`` (and 0) that marks at most ``share`` of them (a value is
    marked when below the threshold)."""
    n = len(tops)
    best = 0.0
    for v in sorted(set(tops)):
        if sum(t < v for t in tops) <= share * n:
            best = v
        else:
            break
    return best


def fit_rule(
    max_coef: int, shifted: Sequence[tuple[Mapping[str, Any], bool]], share: float = MARKED_SHARE
) -> CoefficientRule:
    """The rule for training lines of largest coefficient ``max_coef``, its threshold from the labelled shifted
    validation records it applies to (none: a threshold of 0, marking nothing); ``info`` says what it marks
    there and the exact match in and out."""
    rows = [(extent_top(r), bool(y)) for r, y in shifted if applies(r, max_coef)]
    tau = fit_threshold([p for p, _ in rows], share) if rows else 0.0
    out = [y for p, y in rows if p < tau]
    kept = [y for p, y in rows if p >= tau]
    info = {
        "lines": len(rows),
        "marked": len(out),
        "EM_in": sum(kept) / len(kept) if kept else None,
        "EM_out": sum(out) / len(out) if out else None,
        "rule": f"extent posterior below the largest threshold marking at most {share:.0%} of the shifted "
        "validation lines it reads",
    }
    return CoefficientRule(max_coef, tau, info)
