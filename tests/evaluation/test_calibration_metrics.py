"""Calibration metrics: ECE, reliability bins, AUROC and exact match at a coverage, against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from gnn_chemalgebra.evaluation.calibration import (
    accuracy_at_coverage,
    auroc,
    calibration_summary,
    coverage_curve,
    expected_calibration_error,
    reliability_bins,
)

pytestmark = pytest.mark.unit


def test_ece_of_an_overconfident_model_is_the_gap() -> None:
    # every line says 0.9, half are right: one bin, gap 0.4
    p = [0.9] * 10
    y = [1, 0] * 5
    assert expected_calibration_error(p, y) == pytest.approx(0.4)


def test_ece_weighs_bins_by_their_lines() -> None:
    # bin [0.2, 0.3): 4 lines at 0.25, 1 right (gap 0); bin [0.9, 1]: 6 lines at 0.95, 3 right (gap 0.45)
    p = [0.25] * 4 + [0.95] * 6
    y = [1, 0, 0, 0] + [1, 1, 1, 0, 0, 0]
    assert expected_calibration_error(p, y) == pytest.approx(0.6 * 0.45)
    rows = reliability_bins(p, y)
    assert [(r["lo"], r["n"]) for r in rows] == [(0.2, 4), (0.9, 6)]
    assert rows[1]["accuracy"] == pytest.approx(0.5)


def test_a_confidence_of_one_falls_in_the_last_bin() -> None:
    rows = reliability_bins([1.0, 0.0], [1, 0], bins=10)
    assert [(r["lo"], r["hi"]) for r in rows] == [(0.0, 0.1), (0.9, 1.0)]
    assert expected_calibration_error([1.0, 0.0], [1, 0]) == 0.0


def test_sampled_outcomes_of_honest_probabilities_have_a_small_ece() -> None:
    rng = np.random.default_rng(0)
    p = rng.uniform(size=20000)
    y = rng.uniform(size=20000) < p
    assert expected_calibration_error(p, y) < 0.02
    assert expected_calibration_error(np.clip(p + 0.3, 0, 1), y) > 0.2


def test_auroc_ranks_and_is_undefined_for_one_class() -> None:
    assert auroc([0.9, 0.8, 0.2, 0.1], [1, 1, 0, 0]) == pytest.approx(1.0)
    assert auroc([0.1, 0.2, 0.8, 0.9], [1, 1, 0, 0]) == pytest.approx(0.0)
    assert auroc([0.3, 0.7], [1, 1]) is None


def test_accuracy_at_coverage_keeps_the_most_confident_lines() -> None:
    p = [0.99, 0.1, 0.95, 0.2, 0.9]
    y = [1, 0, 1, 1, 0]
    assert accuracy_at_coverage(p, y, 0.4) == pytest.approx(1.0)  # 0.99, 0.95
    assert accuracy_at_coverage(p, y, 0.6) == pytest.approx(2 / 3)  # + 0.9 (wrong)
    assert accuracy_at_coverage(p, y, 1.0) == pytest.approx(0.6)
    with pytest.raises(ValueError):
        accuracy_at_coverage(p, y, 0.0)


def test_coverage_curve_thresholds_fall_as_coverage_grows() -> None:
    rng = np.random.default_rng(1)
    p = rng.uniform(size=500)
    y = rng.uniform(size=500) < p
    curve = coverage_curve(p, y, points=20)
    assert curve[-1]["coverage"] == 1.0
    assert curve[-1]["accuracy"] == pytest.approx(float(np.mean(y)))
    thresholds = [c["threshold"] for c in curve]
    assert thresholds == sorted(thresholds, reverse=True)


def test_summary_and_bad_inputs() -> None:
    s = calibration_summary([0.9, 0.8, 0.3, 0.2], [1, 1, 0, 1])
    assert s["lines"] == 4 and s["EM"] == pytest.approx(0.75)
    assert s["EM@50"] == pytest.approx(1.0) and s["EM@100"] == pytest.approx(0.75)
    assert sum(b["n"] for b in s["bins"]) == 4
    with pytest.raises(ValueError):
        expected_calibration_error([0.5, 1.5], [1, 0])
    with pytest.raises(ValueError):
        expected_calibration_error([0.5], [1, 0])
