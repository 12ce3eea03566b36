"""The parts of trust that face shifted lines: the other extents of a Type-2 line as alternatives, and the
in-domain flag's coefficient rule (fitted on shifted validation lines, stored in the index, read back)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gnn_chemalgebra.benchmark.calibration import exact_labels
from gnn_chemalgebra.trust.annotate import Trust
from gnn_chemalgebra.trust.coefficients import CoefficientRule, fit_rule, fit_threshold
from gnn_chemalgebra.trust.domain import DomainIndex
from gnn_chemalgebra.trust.extents import extent_alternatives, line_at

pytestmark = pytest.mark.unit


def t2(source: str, prediction: str, extent: int, cands: list[int], post: list[float], **kw) -> dict:
    """A Type-2 formula record written with the benchmark's rule."""
    rec = {
        "line": 1,
        "source": source,
        "prediction": prediction,
        "line_type": 2,
        "extent_rule": "bayes",
        "fallback": False,
        "extent": extent,
        "extent_candidates": cands,
        "extent_posterior": post,
        "molecules": [],
        "main_product": "C3H6O2",
        "beam": [{"prediction": prediction, "logp": -0.1}],
    }
    rec.update(kw)
    return rec


# {3}CH4O + {2}C2H4O2 -> ester + water, written at extent 1 of the candidates 1 and 2
ESTER = t2("{3}CH4O.{2}C2H4O2.{1}H2O", "{2}CH4O.{1}C2H4O2.{2}H2O.{1}C3H6O2", 1, [1, 2], [0.6, 0.4])


def test_the_other_extents_are_the_same_roles_taken_more_or_fewer_times() -> None:
    alts = extent_alternatives(ESTER, 0.48)
    assert [line for line, _ in alts] == ["{1}CH4O.{3}H2O.{2}C3H6O2"]  # the acid used up at extent 2
    assert exact_labels([alts[0][0]], ["{1}CH4O.{3}H2O.{2}C3H6O2"], "formula") == [True]
    # the roles are right with 0.48 / 0.6 = 0.8; extent 2 has 0.4 of the posterior
    assert alts[0][1] == pytest.approx(0.8 * 0.4)
    assert line_at([("A", 1)], {"A": -1}, 2) is None  # a negative coefficient is no line


@pytest.mark.parametrize(
    "change",
    [
        {"line_type": 1},
        {"extent_rule": "limiting"},
        {"fallback": True},
        {"extent_candidates": [1]},
        {"source": "{3}CH4O.{2}CH4O.{1}H2O"},  # a molecule twice: no single change per extent
        {"extent": 2},  # changes of 1 are not 2 * nu: not source + extent * nu
    ],
)
def test_no_extent_alternatives_where_the_line_is_not_source_plus_extent_times_nu(change: dict) -> None:
    assert extent_alternatives({**ESTER, **change}, 0.5) == []


def test_top_k_holds_the_other_extents_below_the_written_line_whatever_k() -> None:
    rec3 = json.loads(json.dumps(ESTER))
    rec1 = json.loads(json.dumps(ESTER))
    Trust("formula").annotate_many([rec3], top_k=3)
    Trust("formula").annotate_many([rec1], top_k=1)
    rows = rec3["top_k"]
    assert rows[0]["prediction"] == ESTER["prediction"] == rec1["top_k"][0]["prediction"]
    assert [r["prediction"] for r in rows[1:]] == ["{1}CH4O.{3}H2O.{2}C3H6O2"]
    assert rows[1]["probability"] <= rows[0]["probability"]
    assert sum(r["probability"] for r in rows) <= 1.0 + 1e-9


def test_the_threshold_marks_at_most_the_share_asked() -> None:
    tops = [0.2, 0.2, 0.3, 0.5, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    assert fit_threshold(tops, 0.1) == 0.2  # marking the two 0.2 lines would be 20%
    assert fit_threshold(tops, 0.3) == 0.5  # below 0.5: three lines
    assert fit_threshold([], 0.1) == 0.0


def test_the_coefficient_rule_marks_only_unsettled_bayes_type2_lines_beyond_the_training_coefficients() -> None:
    rule = CoefficientRule(5, 0.5)
    big = t2("{8}CH4O.{7}C2H4O2", "{7}CH4O.{6}C2H4O2.{1}H2O.{1}C3H6O2", 1, [1, 2, 3], [0.4, 0.35, 0.25])
    assert rule.note(big) is not None and "largest (5)" in rule.note(big)
    assert rule.note({**big, "extent_posterior": [0.7, 0.2, 0.1]}) is None  # a settled extent
    assert rule.note({**big, "extent_rule": "limiting"}) is None  # a chemist's amounts
    assert rule.note({**big, "line_type": 1}) is None
    assert rule.note(ESTER) is None  # coefficients within the training lines'


def test_a_fitted_rule_separates_right_from_wrong_and_travels_with_the_index() -> None:
    rng = np.random.default_rng(0)
    shifted = []
    for _ in range(400):
        p = float(rng.uniform(0.5, 1.0))  # the posterior's largest value
        rec = t2("{8}CH4O.{7}C2H4O2", "{7}CH4O.{6}C2H4O2.{1}H2O.{1}C3H6O2", 1, [1, 2], [p, 1 - p])
        shifted.append((rec, bool(rng.uniform() < p)))
    rule = fit_rule(5, shifted, share=0.1)
    assert 0.5 < rule.extent_p < 0.6  # about its 10% quantile
    assert rule.info["marked"] <= 40
    assert rule.info["EM_out"] < rule.info["EM_in"] - 0.15  # right with chance p
    dom = DomainIndex.build([["CH4O", "C2H4O2"]], ["CH4O", "C2H4O2", "H2O", "C3H6O2"], "formula")
    dom.coefficients = rule
    again = DomainIndex.from_json(json.loads(json.dumps(dom.to_json())), dom.fps)
    assert again.coefficients is not None and again.coefficients.extent_p == rule.extent_p
    low = t2("{8}CH4O.{7}C2H4O2", "{7}CH4O.{6}C2H4O2.{1}H2O.{1}C3H6O2", 1, [1, 2], [0.51, 0.49])
    _, ok, notes = again.check(low)
    assert not ok and any("unsettled extent" in n for n in notes)
