"""Conformal prediction sets on synthetic records: the scores, the quantile's rank, the finite-sample coverage on
exchangeable lines (at least the coverage asked, at most 1 / (n + 1) above it), infinite scores when the right line
is outside the top-k, and the sidecar's round trip and refusals."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.inference.conformal import (
    ConformalTable,
    KindFit,
    ModelFit,
    annotate_sets,
    conformal_quantile,
    fit_kind,
    nonconformity,
    set_members,
    text_line,
)
from gnn_chemalgebra.inference.prediction import SetFields


@pytest.mark.unit
def test_scores_of_one_line() -> None:
    p = [0.6, 0.25, 0.1]
    assert nonconformity(p, [False, True, False], "lac") == pytest.approx(0.75)
    assert nonconformity(p, [False, True, False], "aps") == pytest.approx(0.85)
    assert nonconformity(p, [True, False, False], "aps") == pytest.approx(0.6)
    assert math.isinf(nonconformity(p, [False, False, False], "lac"))
    assert math.isinf(nonconformity(p, [False, False, False], "aps"))
    with pytest.raises(InputError, match="lac, aps"):
        nonconformity(p, [True], "other")


@pytest.mark.unit
def test_quantile_is_the_conformal_rank() -> None:
    scores = [0.1 * i for i in range(1, 10)]  # n = 9
    assert conformal_quantile(scores, 0.5) == pytest.approx(0.5)  # ceil(10 * 0.5) = 5th
    assert conformal_quantile(scores, 0.85) == pytest.approx(0.9)  # ceil(8.5) = 9th
    assert math.isinf(conformal_quantile(scores, 0.95))  # ceil(9.5) = 10 > n: not promised with 9 lines
    assert math.isinf(conformal_quantile([], 0.5))
    with pytest.raises(InputError):
        conformal_quantile(scores, 1.0)


@pytest.mark.unit
def test_set_members() -> None:
    p = [0.7, 0.2, 0.06, 0.04]
    assert set_members(p, 0.85, "lac") == [0, 1]  # p >= 0.15
    assert set_members(p, 0.94, "lac") == [0, 1, 2]  # p >= 0.06: a score equal to the quantile is in
    assert set_members(p, 0.2, "lac") == []  # no line probable enough: an empty set
    assert set_members(p, 0.9, "aps") == [0, 1]  # running sums 0.7, 0.9, 0.96
    assert set_members(p, 0.5, "aps") == []
    assert set_members(p, math.inf, "lac") == [0, 1, 2, 3]


def _synthetic(rng: np.random.Generator, n: int, k: int = 5, rest: float = 0.08) -> tuple[np.ndarray, np.ndarray]:
    """``n`` exchangeable lines: top-k probabilities (sorted, summing to at most 1, the rest "outside"), and the
    index of the right line drawn from them (``k``: outside the top-k)."""
    raw = rng.dirichlet([0.4] * k + [rest], size=n)  # rest 0.08: about 4% of the mass outside the top-k
    probs = -np.sort(-raw[:, :k], axis=1)
    rest = 1.0 - probs.sum(1, keepdims=True)
    full = np.hstack([probs, rest])
    u = rng.random((n, 1))
    truth = (full.cumsum(1) < u).sum(1)
    return probs, np.minimum(truth, k)


def _rows(probs: np.ndarray, truth: np.ndarray) -> list[tuple[list[float], list[bool]]]:
    k = probs.shape[1]
    return [(p.tolist(), [j == t for j in range(k)]) for p, t in zip(probs, truth, strict=True)]


@pytest.mark.unit
@pytest.mark.parametrize("score", ["lac", "aps"])
def test_finite_sample_coverage_on_exchangeable_lines(score: str) -> None:
    rng = np.random.default_rng(0)
    n, n_test, trials, coverage, k = 200, 500, 150, 0.8, 5
    got, sizes = [], []
    for _ in range(trials):
        probs, truth = _synthetic(rng, n + n_test, k)
        fit = fit_kind(_rows(probs[:n], truth[:n]), [k], [coverage], score)
        q = fit.quantiles[k][coverage]
        assert q is not None
        members = [set_members(p.tolist(), q, score) for p in probs[n:]]
        got.append(np.mean([t in m for t, m in zip(truth[n:], members, strict=True)]))
        sizes.append(np.mean([len(m) for m in members]))
    mean = float(np.mean(got))
    # E[coverage] lies in [0.8, 0.8 + 1/201]; the mean of 150 trials is within a few 0.001 of it
    assert coverage - 0.008 <= mean <= coverage + 1 / (n + 1) + 0.008, mean
    assert 0 < np.mean(sizes) < k


@pytest.mark.unit
def test_coverage_out_of_reach_is_said_not_claimed() -> None:
    rng = np.random.default_rng(1)
    probs, truth = _synthetic(rng, 400, 2, rest=0.3)  # a top-2 misses the right line on many lines
    outside = float(np.mean(truth == 2))
    assert outside > 0.1
    fit = fit_kind(_rows(probs, truth), [1, 2], [0.5, 0.9], "lac")
    assert fit.quantiles[2][0.9] is None and fit.quantiles[2][0.5] is not None
    assert fit.outside[2] == int((truth == 2).sum())
    model = ModelFit("m.pt", "0" * 64, None, "formula", {1: fit})
    rec = {"line_type": 1, "top_k": [{"prediction": "A", "probability": 0.6}, {"prediction": "B", "probability": 0.3}]}
    (out,) = annotate_sets([dict(rec)], model, 0.9, 2, "lac")
    assert out["prediction_set"] is None and out["set_size"] is None
    assert "cannot be reached with top-k 2" in out["conformal_note"] and text_line(SetFields.of_record(out)) == "NA"
    (out,) = annotate_sets([dict(rec)], model, 0.5, 2, "lac")
    q = fit.quantiles[2][0.5]
    assert out["set_size"] == sum(1 - p <= q for p in (0.6, 0.3))
    assert [m["prediction"] for m in out["prediction_set"]] == ["A", "B"][: out["set_size"]]


@pytest.mark.unit
def test_lines_the_fit_did_not_measure_get_no_set() -> None:
    kf = KindFit({5: {0.9: 0.8}}, 100)
    model = ModelFit("m.pt", "0" * 64, None, "formula", {1: kf})
    rows = [{"prediction": "A", "probability": 0.7}, {"prediction": "B", "probability": 0.25}]
    recs = [
        {"line_type": 1, "top_k": rows},
        {"line_type": 2, "top_k": rows},
        {"line_type": 2, "extent_rule": "limiting", "top_k": rows},
        {"line_type": 1, "top_k": rows, "calibration_note": "decode settings differ"},
    ]
    out = annotate_sets([dict(r) for r in recs], model, 0.9, 5, "lac")
    assert out[0]["set_size"] == 2 and text_line(SetFields.of_record(out[0])) == "2\tA\t0.7000\tB\t0.2500"
    assert "Type-2 lines" in out[1]["conformal_note"]
    assert "--extent limiting" in out[2]["conformal_note"]
    assert "decode settings differ" in out[3]["conformal_note"]
    (few,) = annotate_sets([dict(recs[0])], model, 0.9, 3, "lac")
    assert "no conformal fit for top-k 3" in few["conformal_note"]
    empty = annotate_sets([{"line_type": 1, "top_k": [{"prediction": "A", "probability": 0.1}]}], model, 0.9, 5, "lac")
    assert empty[0]["prediction_set"] == [] and text_line(SetFields.of_record(empty[0])) == "0"


@pytest.mark.unit
def test_sidecar_round_trip_and_refusals(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    probs, truth = _synthetic(rng, 300)
    fit = fit_kind(_rows(probs, truth), range(1, 6), [0.8, 0.9], "aps", [{"src": "src-valid.txt", "lines": 300}])
    table = ConformalTable("aps", [ModelFit("m.pt", "a" * 64, "b" * 64, "smiles", {1: fit})], {"top_k": 5})
    path = tmp_path / "sets.json"
    path.write_text(json.dumps(table.to_json()))
    back = ConformalTable.load(path)
    assert back.to_json() == table.to_json()
    assert back.for_checkpoint("a" * 64) is not None and back.for_checkpoint("c" * 64) is None
    for bad, why in (
        ({"kind": "other"}, "not a conformal sidecar"),
        ({**table.to_json(), "format": 99}, "format 99"),
        ({**table.to_json(), "score": "xyz"}, "score 'xyz'"),
        ({**table.to_json(), "models": [{"checkpoint": "m.pt"}]}, "malformed"),
    ):
        path.write_text(json.dumps(bad))
        with pytest.raises(InputError, match=why):
            ConformalTable.load(path)
    path.write_text("{not json")
    with pytest.raises(InputError, match="unreadable"):
        ConformalTable.load(path)
    with pytest.raises(InputError, match="not found"):
        ConformalTable.load(tmp_path / "none.json")
