"""The numbers the calibration reads off a record, each one function registered under its name.

A sidecar stores the names it was fitted with; the vector is built from the registry in registration order, so a
name and its position cannot drift apart (:class:`FeatureRegistry`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

NO_SCORE = -30.0  # the score of a line without one (a fallback's no-reaction entry)
_EPS = 1e-4

T = TypeVar("T")


class FeatureRegistry(Generic[T]):
    """Named feature functions in the order they were registered: :attr:`names` and :meth:`vector` both come
    from the one mapping."""

    def __init__(self) -> None:
        self._functions: dict[str, Callable[[T], float]] = {}

    def add(self, name: str, fn: Callable[[T], float]) -> Callable[[T], float]:
        """Register ``fn`` as the feature ``name``, after those registered before."""
        if name in self._functions:
            raise ValueError(f"feature {name!r} is registered twice")
        self._functions[name] = fn
        return fn

    def register(self, name: str) -> Callable[[Callable[[T], float]], Callable[[T], float]]:
        """:meth:`add` as a decorator."""
        return lambda fn: self.add(name, fn)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._functions)

    def vector(self, x: T) -> list[float]:
        return [float(fn(x)) for fn in self._functions.values()]


def neglog(v: float) -> float:
    """``log(-v + 1e-4)`` for a log-probability ``v`` <= 0 (near 0 spread out, where the right lines are)."""
    return math.log(max(-v, 0.0) + _EPS)


def logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def entry_score(entry: Mapping[str, Any] | None) -> float:
    """A beam entry's log-probability, capped at 0 (:data:`NO_SCORE` without one)."""
    v = None if entry is None else entry.get("logp")
    return NO_SCORE if v is None else min(float(v), 0.0)


# --------------------------------------------------------------------------- the written line's features
@dataclass(frozen=True)
class WrittenLine:
    """What the written line's features are read from, computed once per record."""

    record: Mapping[str, Any]
    probs: tuple[float, ...]  # the role head's probability of each role written
    roles: float  # their joint log-probability
    score: float  # the written hypothesis' score
    posterior: tuple[float, ...]  # the extent posterior
    top: tuple[float, float]  # its two largest values (0 when missing)

    @classmethod
    def of(cls, rec: Mapping[str, Any]) -> WrittenLine:
        probs = tuple(float(m.get("confidence") or 0.0) for m in rec.get("molecules") or [])
        beam = rec.get("beam") or []
        score = NO_SCORE if bool(rec.get("fallback")) or not beam else entry_score(beam[0])
        post = tuple(rec.get("extent_posterior") or [])
        top = sorted(post, reverse=True)[:2] + [0.0, 0.0]
        roles = sum(math.log(max(p, _EPS)) for p in probs)
        return cls(rec, probs, roles, score, post, (top[0], top[1]))


RECORD_FEATURES: FeatureRegistry[WrittenLine] = FeatureRegistry()
feature = RECORD_FEATURES.register


@feature("score")
def _score(w: WrittenLine) -> float:
    """-log of minus the written hypothesis' score (roles + leftover/edit [+ evidence])."""
    return neglog(w.score)


@feature("roles")
def _roles(w: WrittenLine) -> float:
    """The same of the role head's joint log-probability of the roles written."""
    return neglog(w.roles)


@feature("rest")
def _rest(w: WrittenLine) -> float:
    """The same of score - roles (leftover head, edit model, coefficient evidence)."""
    return neglog(min(w.score - w.roles, 0.0))


@feature("extent")
def _extent(w: WrittenLine) -> float:
    """The same of the extent posterior's largest value (Type 2)."""
    return neglog(math.log(max(max(w.posterior), _EPS)) if w.posterior else 0.0)


@feature("weakest_role")
def _weakest_role(w: WrittenLine) -> float:
    """The same of the least probable role written."""
    return neglog(math.log(max(min(w.probs), _EPS)) if w.probs else 0.0)


@feature("fallback")
def _fallback(w: WrittenLine) -> float:
    """No balanced hypothesis: the source written back."""
    return float(bool(w.record.get("fallback")))


@feature("extent_choices")
def _extent_choices(w: WrittenLine) -> float:
    """More than one extent candidate."""
    return float(len(w.record.get("extent_candidates") or []) > 1)


@feature("molecules")
def _molecules(w: WrittenLine) -> float:
    """Molecules in the source."""
    return float(len(w.probs))


@feature("extent_p")
def _extent_p(w: WrittenLine) -> float:
    """The extent posterior's largest value itself (1 without a posterior)."""
    return float(w.top[0]) if w.posterior else 1.0


@feature("extent_gap")
def _extent_gap(w: WrittenLine) -> float:
    """Its margin over the second largest."""
    return float(w.top[0] - w.top[1]) if w.posterior else 1.0


@feature("extent_n")
def _extent_n(w: WrittenLine) -> float:
    """Extents in the posterior."""
    return float(len(w.posterior))


@feature("coef_max")
def _coef_max(w: WrittenLine) -> float:
    """Type 2: the log of the source line's largest coefficient. A Type-2 line's extent is read from its
    coefficients, and lines beyond the training lines' range (6-10) are read less reliably (fitted with shifted
    validation lines). 0 for other lines, whose written line does not depend on the coefficients' magnitude."""
    from .coefficients import largest_coefficient

    if int(w.record.get("line_type") or 1) != 2:
        return 0.0
    return math.log(max(largest_coefficient(w.record) or 1, 1))


FEATURES: tuple[str, ...] = RECORD_FEATURES.names
SECOND_OPINION_FEATURE = "second_opinion_differs"


def _agrees(rec: Mapping[str, Any], field: str) -> bool | None:
    """The ``agrees`` of a record's second reading ``field`` (``None``: none, or not a usable one)."""
    reading = rec.get(field)
    agrees = reading.get("agrees") if isinstance(reading, Mapping) else None
    return agrees if isinstance(agrees, bool) else None


def second_opinion_agrees(rec: Mapping[str, Any]) -> bool | None:
    """Whether a record's second opinion wrote the same line (``None``: no usable second opinion, which the
    Type-1 model reads)."""
    return _agrees(rec, "second_opinion")


FORMULA_CHECK_FEATURE = "formula_check_differs"


def formula_check_agrees(rec: Mapping[str, Any]) -> bool | None:
    """Whether a chemist's SMILES line written has the formulas the formula model wrote for it
    (``decode.formula_check``; ``None``: no such reading)."""
    return _agrees(rec, "formula_check")


def record_features(rec: Mapping[str, Any], second_opinion: bool = False, formula_check: bool = False) -> list[float]:
    """The :data:`FEATURES` of a record's written line; with ``second_opinion`` one more
    (:data:`SECOND_OPINION_FEATURE`), 1.0 when the second opinion wrote another line; with ``formula_check`` one more
    (:data:`FORMULA_CHECK_FEATURE`), 1.0 when the formula model's line has other formulas."""
    row = RECORD_FEATURES.vector(WrittenLine.of(rec))
    row += [float(second_opinion_agrees(rec) is False)] if second_opinion else []
    return row + ([float(formula_check_agrees(rec) is False)] if formula_check else [])


# --------------------------------------------------------------------------- an alternative line's features
@dataclass(frozen=True)
class Alternative:
    """The ``rank``-th distinct balanced line after the written one (rank 1 = the first)."""

    top_score: float  # the written line's score
    score: float
    rank: int
    top_conf: float  # the written line's calibrated confidence


ALTERNATIVE_FEATURES: FeatureRegistry[Alternative] = FeatureRegistry()
ALTERNATIVE_FEATURES.add("score", lambda a: neglog(a.score))  # the line's own score
ALTERNATIVE_FEATURES.add("gap", lambda a: math.log(max(a.top_score - a.score, 0.0) + 1e-3))  # below the written's
ALTERNATIVE_FEATURES.add("rank", lambda a: math.log(a.rank + 1.0))  # 1 = the first after the written line
ALTERNATIVE_FEATURES.add("top", lambda a: logit(a.top_conf))  # the written line's calibrated confidence

ALT_FEATURES: tuple[str, ...] = ALTERNATIVE_FEATURES.names


def alternative_features(top_score: float, score: float, rank: int, top_conf: float) -> list[float]:
    """The :data:`ALT_FEATURES` of the ``rank``-th distinct balanced line (rank 1 = the first after the written)."""
    return ALTERNATIVE_FEATURES.vector(Alternative(top_score, score, rank, top_conf))
