"""The extent rule as the decoder uses it: coefficient sets, candidates from a predicted nu, per-term roles and
the posterior with its fallback when the roles explain nothing."""

from __future__ import annotations

import math

import pytest

from gnn_chemalgebra.algebra.extent import (
    S_IN,
    S_OUT,
    BaseRoles,
    coef_set,
    extent_candidates,
    extent_posterior,
    extent_posterior_evidence,
    group_terms,
    guess_coef_set,
    term_roles,
    type2_log_evidence,
    type2_posterior,
)
from gnn_chemalgebra.chem.bag import Term

pytestmark = pytest.mark.unit


def test_coefficient_sets_and_the_guess_for_free_lines() -> None:
    assert coef_set("in") == S_IN == (1, 2, 3, 4, 5) and coef_set("out") == S_OUT == (6, 7, 8, 9, 10)
    assert guess_coef_set([Term(5, "A"), Term(1, "B")]) == "in"
    assert guess_coef_set([Term(6, "A"), Term(1, "B")]) == "out"


def test_candidates_stop_where_a_reactant_runs_out() -> None:
    groups = group_terms([Term(4, "A"), Term(3, "B"), Term(2, "B"), Term(1, "C")])
    assert groups == {"A": [4], "B": [3, 2], "C": [1]}
    assert list(extent_candidates(groups, {"A": -1, "B": -2, "D": 1})) == [1, 2]  # B: two terms, min 2
    assert list(extent_candidates(groups, {"A": -1, "B": -1, "D": 1})) == [1, 2, 3, 4]  # B: one of two, total 5
    assert not extent_candidates(groups, {"C": 0, "D": 1})  # nothing consumed


def test_candidates_of_huge_coefficients_are_a_range_not_a_list() -> None:
    """``--max-coef 0`` lets a line hold 10^11 of a reactant: the candidates stay a range (no 10^11-element list),
    and a uniform fallback posterior that long is left unlisted (``[]``), its extents the range."""
    huge = 10**11
    cands = extent_candidates(group_terms([Term(huge, "A"), Term(huge - 1, "B")]), {"A": -1, "B": -1, "P": 1})
    assert isinstance(cands, range) and (len(cands), cands[0], cands[-1]) == (huge - 1, 1, huge - 1)
    cands, post, log_ev = extent_posterior_evidence([Term(huge, "A"), Term(7, "R")], {"A": -1, "P": 1}, "in")
    assert isinstance(cands, range) and len(cands) == huge and post == [] and log_ev == float("-inf")


def test_posterior_from_a_predicted_nu_is_the_exact_type2_posterior() -> None:
    src = [Term(5, "A"), Term(2, "B")]  # A + B -> P, nothing written as product
    nu = {"A": -1, "B": -1, "P": 1}
    cands, post, log_ev = extent_posterior_evidence(src, nu, "in")
    exact = type2_posterior(src, BaseRoles.of(["A", "B"], [], ["P"]), S_IN)
    assert cands == sorted(exact) and post == pytest.approx([float(exact[c]) for c in cands])
    assert math.isclose(log_ev, type2_log_evidence(src, BaseRoles.of(["A", "B"], [], ["P"]), S_IN))
    assert extent_posterior(src, nu, "in") == (cands, post)


def test_roles_that_explain_nothing_fall_back_to_uniform_limiting_candidates() -> None:
    src = [Term(3, "A"), Term(7, "R")]  # R = 7 is outside S_in: no k_hat explains it as a reagent
    cands, post, log_ev = extent_posterior_evidence(src, {"A": -1, "P": 1}, "in")
    assert cands == [1, 2, 3] and post == pytest.approx([1 / 3] * 3) and log_ev == float("-inf")


def test_term_roles_give_one_role_per_source_term() -> None:
    terms = [Term(3, "HCl"), Term(1, "HCl"), Term(4, "A")]
    assert term_roles(terms, {"A": -1, "HCl": 1}, vtype=2) == ["reagent", "product", "reactant"]
    assert term_roles(terms, {"A": -1, "HCl": 1}, vtype=1) == ["reagent", "reagent", "reactant"]
