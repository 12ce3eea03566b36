"""A standardised logistic regression stored as plain numbers (no pickle), fitted with scikit-learn."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError


@dataclass
class LinearModel:
    """``sigmoid(((x - mean) / scale) . coef + intercept)``, each feature first clipped to the range it had in the
    fitting lines (``lo``, ``hi``: no extrapolation)."""

    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    lo: list[float] | None = None
    hi: list[float] | None = None

    def predict(self, X: np.ndarray) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if self.lo is not None and self.hi is not None:
            X = np.clip(X, np.asarray(self.lo), np.asarray(self.hi))
        z = ((X - np.asarray(self.mean)) / np.asarray(self.scale)) @ np.asarray(self.coef) + self.intercept
        return 1.0 / (1.0 + np.exp(-np.clip(z, -50.0, 50.0)))

    @classmethod
    def fit(cls, X: np.ndarray, y: np.ndarray, C: float = 1.0) -> LinearModel:
        """Fit on rows ``X`` and 0/1 outcomes ``y`` (scikit-learn's L2 logistic regression, ``C`` its inverse
        strength). Needs both outcomes among the rows."""
        from sklearn.linear_model import LogisticRegression

        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=int)
        if len(set(y.tolist())) < 2:
            raise InputError(
                f"cannot fit a calibration on {len(y)} lines that are all {'right' if y.any() else 'wrong'}"
            )
        mean = X.mean(0)
        scale = X.std(0)
        scale[scale == 0] = 1.0
        lr = LogisticRegression(C=C, max_iter=5000).fit((X - mean) / scale, y)
        return cls(
            mean.tolist(),
            scale.tolist(),
            lr.coef_[0].tolist(),
            float(lr.intercept_[0]),
            X.min(0).tolist(),
            X.max(0).tolist(),
        )

    def to_json(self) -> dict[str, Any]:
        d = {"mean": self.mean, "scale": self.scale, "coef": self.coef, "intercept": self.intercept}
        return {**d, "lo": self.lo, "hi": self.hi}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> LinearModel:
        lo, hi = d.get("lo"), d.get("hi")
        return cls(
            list(d["mean"]), list(d["scale"]), list(d["coef"]), float(d["intercept"]),
            None if lo is None else list(lo), None if hi is None else list(hi),
        )  # fmt: skip
