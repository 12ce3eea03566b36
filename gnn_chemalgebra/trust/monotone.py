"""A monotone map on top of the linear score: the ``isotonic`` calibrator.

The logistic regression (:class:`~.linear.LinearModel`) ranks lines well but its shape is fixed: fitted on
in-distribution and shifted lines together (Type-2 lines with coefficients beyond the training range), it is too
confident in some ranges of its score and not confident enough in others. :class:`IsotonicModel` keeps the linear
score (so the ranking, and the AUROC, stay as they are) and maps it through a non-decreasing function fitted by
isotonic regression on held-out scores: the linear model is fitted on all the lines, the map on the scores each
line got from a linear model fitted without it (K folds), so the map corrects what the linear model does on lines
it has not seen rather than on its own fitting lines.

The map is stored as knots (the mean score of each block of equal isotonic value, and that value) and read by
linear interpolation between them: strictly increasing between the first and the last knot, so lines the linear
score tells apart stay apart; flat beyond the end knots (no extrapolation). Plain numbers, no pickle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from .linear import LinearModel

FOLDS = 5  # the held-out scores the map is fitted on
SEED = 0  # the folds' draw


@dataclass
class MonotoneMap:
    """A non-decreasing piecewise-linear function of a score in [0, 1]: ``np.interp(s, x, y)``."""

    x: list[float]
    y: list[float]

    def __post_init__(self) -> None:
        if not self.x or len(self.x) != len(self.y):
            raise InputError(f"a monotone map needs knots: {len(self.x)} scores, {len(self.y)} values")
        if np.any(np.diff(self.x) < 0) or np.any(np.diff(self.y) < 0):
            raise InputError("a monotone map's knots must not decrease")
        if min(self.y) < 0.0 or max(self.y) > 1.0:
            raise InputError("a monotone map's values must lie in [0, 1]")

    def __call__(self, scores: np.ndarray) -> np.ndarray:
        return np.interp(np.asarray(scores, dtype=float), self.x, self.y)

    @classmethod
    def fit(cls, scores: np.ndarray, y: np.ndarray) -> MonotoneMap:
        """Isotonic regression of the 0/1 outcomes ``y`` on ``scores``; one knot per block of equal value, at the
        block's mean score (blocks' values strictly increase, so the knots do). An end block whose lines were all
        wrong (all right) says ``1 / (n + 2)`` (``(n + 1) / (n + 2)``) rather than a certain 0 (1): ``n`` lines
        without a miss do not make a line certain."""
        from sklearn.isotonic import IsotonicRegression

        s = np.asarray(scores, dtype=float)
        fitted = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(s, y).predict(s)
        order = np.argsort(s, kind="stable")
        s, fitted = s[order], fitted[order]
        starts = np.flatnonzero(np.r_[True, np.diff(fitted) != 0])
        ends = np.r_[starts[1:], len(s)]
        xs = [float(s[a:b].mean()) for a, b in zip(starts, ends, strict=True)]
        ys = [float(fitted[a]) for a in starts]
        n_first, n_last = int(ends[0] - starts[0]), int(ends[-1] - starts[-1])
        if ys[-1] >= 1.0:
            ys[-1] = max((n_last + 1) / (n_last + 2), ys[-2] if len(ys) > 1 else 0.0)
        if ys[0] <= 0.0:
            ys[0] = min(1 / (n_first + 2), ys[1] if len(ys) > 1 else 1.0)
        return cls(xs, ys)


@dataclass
class IsotonicModel:
    """``map(linear(X))``: a :class:`LinearModel` and a :class:`MonotoneMap` of its score."""

    linear: LinearModel
    map: MonotoneMap

    name = "isotonic"

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.map(self.linear.predict(X))

    @classmethod
    def fit(cls, X: np.ndarray, y: np.ndarray, C: float = 1.0, folds: int = FOLDS, seed: int = SEED) -> IsotonicModel:
        """The linear model on all rows, the map on each row's score from a linear model fitted on the other
        folds (a fold whose rest holds one outcome only keeps the full model's score)."""
        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=int)
        linear = LinearModel.fit(X, y, C)
        fold = np.random.default_rng(seed).integers(0, folds, len(y))
        held_out = linear.predict(X)
        for k in range(folds):
            rest = fold != k
            if (~rest).any() and len(set(y[rest].tolist())) == 2:
                held_out[~rest] = LinearModel.fit(X[rest], y[rest], C).predict(X[~rest])
        return cls(linear, MonotoneMap.fit(held_out, y))

    def to_json(self) -> dict[str, Any]:
        return {"calibrator": self.name, "linear": self.linear.to_json(), "x": self.map.x, "y": self.map.y}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> IsotonicModel:
        return cls(LinearModel.from_json(d["linear"]), MonotoneMap(list(d["x"]), list(d["y"])))
