"""How far a confidence can be believed: calibration error, ranking quality and accuracy at a coverage.

Inputs are one probability per line (``p``: the model's stated chance that the whole line is exactly right) and
one 0/1 outcome per line (``y``: the line matched its target exactly). Everything here is plain numpy (AUROC
through scikit-learn, imported when asked); no torch.

* :func:`expected_calibration_error` -- the weighted mean gap between stated confidence and accuracy over
  equal-width confidence bins (10 by default), the usual ECE;
* :func:`reliability_bins` -- the same bins as rows (what a reliability diagram draws);
* :func:`auroc` -- the area under the ROC curve of ``p`` for right against wrong lines;
* :func:`accuracy_at_coverage` / :func:`coverage_curve` -- keep the most confident share of the lines and
  report the exact-match rate of those (the curve a user who abstains below a threshold moves along);
* :func:`calibration_summary` -- all of them in one JSON-able dict.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

COVERAGES: tuple[float, ...] = (0.5, 0.8, 1.0)


def _arrays(p: Sequence[float], y: Sequence[bool | int]) -> tuple[np.ndarray, np.ndarray]:
    pa = np.asarray(p, dtype=float)
    ya = np.asarray(y, dtype=float)
    if pa.shape != ya.shape or pa.ndim != 1:
        raise ValueError(f"need one probability per outcome, got {pa.shape} and {ya.shape}")
    if pa.size and (np.isnan(pa).any() or pa.min() < 0.0 or pa.max() > 1.0):
        raise ValueError("probabilities must lie in [0, 1]")
    return pa, ya


def _bin_index(p: np.ndarray, bins: int) -> np.ndarray:
    """Equal-width bins over [0, 1]; 1.0 falls in the last bin."""
    if bins < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    return np.minimum((p * bins).astype(int), bins - 1)


def reliability_bins(p: Sequence[float], y: Sequence[bool | int], bins: int = 10) -> list[dict[str, Any]]:
    """One row per non-empty bin: its range, line count, mean confidence and accuracy."""
    pa, ya = _arrays(p, y)
    idx = _bin_index(pa, bins)
    rows = []
    for b in range(bins):
        k = idx == b
        n = int(k.sum())
        if n == 0:
            continue
        rows.append(
            {
                "lo": b / bins,
                "hi": (b + 1) / bins,
                "n": n,
                "confidence": float(pa[k].mean()),
                "accuracy": float(ya[k].mean()),
            }
        )
    return rows


def expected_calibration_error(p: Sequence[float], y: Sequence[bool | int], bins: int = 10) -> float:
    """ECE: sum over bins of (lines in bin / lines) * |mean confidence - accuracy|; 0.0 for no lines."""
    pa, ya = _arrays(p, y)
    if pa.size == 0:
        return 0.0
    return float(sum(r["n"] / pa.size * abs(r["confidence"] - r["accuracy"]) for r in reliability_bins(pa, ya, bins)))


def brier_score(p: Sequence[float], y: Sequence[bool | int]) -> float:
    """Mean squared difference between confidence and outcome."""
    pa, ya = _arrays(p, y)
    return float(np.mean((pa - ya) ** 2)) if pa.size else 0.0


def auroc(p: Sequence[float], y: Sequence[bool | int]) -> float | None:
    """Area under the ROC curve of ``p`` separating right (1) from wrong (0) lines; ``None`` when only one kind
    of line is present (the area is undefined)."""
    pa, ya = _arrays(p, y)
    if pa.size == 0 or ya.min() == ya.max():
        return None
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(ya, pa))


def _order(p: np.ndarray) -> np.ndarray:
    """Most confident first; ties keep input order (so the result does not depend on the sort's internals)."""
    return np.argsort(-p, kind="stable")


def accuracy_at_coverage(p: Sequence[float], y: Sequence[bool | int], coverage: float) -> float | None:
    """Exact-match rate of the ``coverage`` share of lines with the highest confidence (at least one line);
    ``None`` for no lines."""
    if not 0.0 < coverage <= 1.0:
        raise ValueError(f"coverage must lie in (0, 1], got {coverage}")
    pa, ya = _arrays(p, y)
    if pa.size == 0:
        return None
    n = max(1, int(round(coverage * pa.size)))
    return float(ya[_order(pa)[:n]].mean())


def coverage_curve(p: Sequence[float], y: Sequence[bool | int], points: int = 100) -> list[dict[str, float]]:
    """``points`` evenly spaced coverages in (0, 1]: the exact-match rate of the most confident lines kept, and the
    lowest confidence kept (the ``--min-confidence`` that would keep that share)."""
    pa, ya = _arrays(p, y)
    if pa.size == 0:
        return []
    order = _order(pa)
    hits = np.cumsum(ya[order])
    out = []
    for i in range(1, points + 1):
        n = max(1, int(round(i / points * pa.size)))
        out.append({"coverage": n / pa.size, "accuracy": float(hits[n - 1] / n), "threshold": float(pa[order[n - 1]])})
    return out


def calibration_summary(
    p: Sequence[float], y: Sequence[bool | int], bins: int = 10, coverages: Sequence[float] = COVERAGES
) -> dict[str, Any]:
    """Lines, exact match, mean confidence, ECE, Brier score, AUROC and the exact match at each coverage (keys
    ``EM@50`` ...), all as fractions; plus the reliability rows."""
    pa, ya = _arrays(p, y)
    out: dict[str, Any] = {
        "lines": int(pa.size),
        "EM": float(ya.mean()) if pa.size else None,
        "mean_confidence": float(pa.mean()) if pa.size else None,
        "ECE": expected_calibration_error(pa, ya, bins),
        "brier": brier_score(pa, ya),
        "AUROC": auroc(pa, ya),
    }
    for c in coverages:
        out[f"EM@{round(c * 100):d}"] = accuracy_at_coverage(pa, ya, c)
    out["bins"] = reliability_bins(pa, ya, bins)
    return out
