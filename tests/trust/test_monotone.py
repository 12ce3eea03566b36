"""The ``isotonic`` calibrator: a monotone map fitted on held-out linear scores, chosen by name per kind."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.evaluation.calibration import auroc, expected_calibration_error
from gnn_chemalgebra.trust.calibrators import (
    CALIBRATORS,
    ISOTONIC,
    KINDS,
    LINEAR,
    TYPE1,
    TYPE2,
    Calibrator,
    model_from_json,
)
from gnn_chemalgebra.trust.fit import fit_calibrator
from gnn_chemalgebra.trust.linear import LinearModel
from gnn_chemalgebra.trust.monotone import IsotonicModel, MonotoneMap

pytestmark = pytest.mark.unit


def synthetic(n: int, seed: int) -> tuple[list[dict], list[bool]]:
    """Formula records of ``A + B -> AB``, Type 1 and Type 2 in turn, whose chance of being right falls with
    -score (as the network's do), with sampled outcomes."""
    rng = np.random.default_rng(seed)
    recs, ys = [], []
    for i in range(n):
        score, role_p = -float(rng.exponential(0.5)), float(rng.uniform(0.6, 1.0))
        mols = [{"mol": m, "nu": -1, "confidence": role_p} for m in ("C2H4O2", "CH4O")]
        recs.append({
            "line": i + 1, "source": "{1}CH4O.{1}C2H4O2", "prediction": "{1}H2O.{1}C3H6O2", "line_type": 1 + i % 2,
            "fallback": False, "confidence": role_p * role_p, "molecules": mols, "extent_candidates": [1],
            "extent_posterior": [], "main_product": "C3H6O2",
            "beam": [{"prediction": "{1}H2O.{1}C3H6O2", "logp": score}],
        })  # fmt: skip
        ys.append(bool(rng.uniform() < np.exp(score)))
    return recs, ys


def steep(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two features; the chance of being right is a steep, non-logistic function of the first (nearly a step
    at 0, flat at 0.15 and 0.9 on either side), which a logistic regression cannot follow."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 2))
    p = np.where(X[:, 0] < 0, 0.15, 0.9) + 0.02 * np.tanh(X[:, 0])
    return X, (rng.uniform(size=n) < p).astype(int)


def test_the_map_follows_a_shape_the_linear_model_cannot_and_keeps_its_ranking() -> None:
    X, y = steep(6000, 0)
    Xt, yt = steep(6000, 1)
    lin, iso = LinearModel.fit(X, y), IsotonicModel.fit(X, y)
    p_lin, p_iso = lin.predict(Xt), iso.predict(Xt)
    assert expected_calibration_error(p_iso, yt) < 0.02
    assert expected_calibration_error(p_lin, yt) > expected_calibration_error(p_iso, yt) + 0.03
    order = np.argsort(lin.predict(Xt))
    assert np.all(np.diff(p_iso[order]) >= 0)  # never reorders the linear score
    assert auroc(p_iso, yt) == pytest.approx(auroc(p_lin, yt), abs=0.01)


def test_the_map_is_fitted_on_held_out_scores_not_the_linear_models_own() -> None:
    """With as many features as noise allows, the in-sample scores are over-confident; the folds' are not:
    a map fitted on held-out scores pulls the confidence of fresh lines back towards their rate."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 40))
    y = (rng.uniform(size=300) < 0.5).astype(int)
    Xt = rng.normal(size=(3000, 40))
    yt = (rng.uniform(size=3000) < 0.5).astype(int)
    lin = LinearModel.fit(X, y, C=100.0)
    iso = IsotonicModel.fit(X, y, C=100.0)
    assert expected_calibration_error(iso.predict(Xt), yt) < expected_calibration_error(lin.predict(Xt), yt) - 0.05


def test_end_blocks_without_a_miss_are_not_certain() -> None:
    m = MonotoneMap.fit(np.array([0.1, 0.2, 0.3, 0.5, 0.6, 0.8, 0.9, 0.95]), np.array([0, 0, 0, 1, 0, 1, 1, 1]))
    assert m.y == pytest.approx([1 / 5, 0.5, 4 / 5])  # 3 wrong, then 1 of 2, then 3 right
    assert m(np.array([0.0, 1.0])).tolist() == pytest.approx([0.2, 0.8])
    one = MonotoneMap.fit(np.array([0.2, 0.4]), np.array([1, 1]))
    assert one.y == pytest.approx([3 / 4])


def test_map_knots_are_checked_and_read_by_interpolation() -> None:
    m = MonotoneMap([0.2, 0.6], [0.1, 0.5])
    assert m(np.array([0.0, 0.4, 1.0])).tolist() == pytest.approx([0.1, 0.3, 0.5])
    for xs, ys in (([0.6, 0.2], [0.1, 0.5]), ([0.2, 0.6], [0.5, 0.1]), ([0.2], [1.5]), ([], [])):
        with pytest.raises(InputError):
            MonotoneMap(xs, ys)


def test_a_model_names_its_calibrator_and_one_without_a_name_is_linear() -> None:
    X, y = steep(800, 2)
    iso = IsotonicModel.fit(X, y)
    d = json.loads(json.dumps(iso.to_json()))
    assert d["calibrator"] == ISOTONIC and isinstance(model_from_json(d), IsotonicModel)
    assert np.allclose(model_from_json(d).predict(X), iso.predict(X))
    lin = model_from_json(LinearModel.fit(X, y).to_json())
    assert isinstance(lin, LinearModel)
    with pytest.raises(InputError, match="unknown calibrator 'spline'"):
        model_from_json({**d, "calibrator": "spline"})
    assert {LINEAR, ISOTONIC} <= set(CALIBRATORS)


def test_type2_lines_fit_the_isotonic_calibrator_by_default_and_another_by_name() -> None:
    recs, ys = synthetic(1200, seed=5)
    assert KINDS[TYPE2].calibrator == ISOTONIC and KINDS[TYPE1].calibrator == LINEAR
    cal = fit_calibrator(recs, ys)
    assert isinstance(cal.top[TYPE2], IsotonicModel) and isinstance(cal.top[TYPE1], LinearModel)
    assert cal.fitted_on["line_types"]["2"]["calibrator"] == ISOTONIC
    back = Calibrator.from_json(json.loads(json.dumps(cal.to_json())))
    assert isinstance(back.top[TYPE2], IsotonicModel)
    assert np.allclose(back.confidence(recs)[0], cal.confidence(recs)[0])
    plain = fit_calibrator(recs, ys, calibrators={TYPE2: LINEAR})
    assert isinstance(plain.top[TYPE2], LinearModel)
    with pytest.raises(InputError, match="unknown calibrator"):
        fit_calibrator(recs, ys, calibrators={TYPE2: "nope"})
