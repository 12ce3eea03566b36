"""Type-2 posterior: exact against a brute-force enumeration of the generator, and by Monte-Carlo."""

from __future__ import annotations

import itertools
import math
import random
from collections import defaultdict
from fractions import Fraction

import pytest
from _algebra_synth import REACTIONS, gen_type2

from gnn_chemalgebra.algebra.extent import (
    S_IN,
    S_OUT,
    BaseRoles,
    bayes_em,
    bayes_extent,
    limiting_extent,
    type1_extent,
    type2_log_evidence,
    type2_posterior,
)
from gnn_chemalgebra.chem.bag import Term
from gnn_chemalgebra.errors import BalanceError


def _source(rxn, ks: dict[str, int], k_hat: int) -> list[Term]:
    reactants, reagents, products = rxn
    src = [Term(ks[m], m) for m in reactants + reagents]
    return src + [Term(ks[m] - k_hat, m) for m in products if ks[m] - k_hat > 0]


def _key(src: list[Term]) -> tuple:
    return tuple(sorted((t.mol, t.coef) for t in src))


@pytest.mark.unit
@pytest.mark.parametrize("rxn", [REACTIONS[i] for i in (0, 2, 3, 5, 6, 7)])
@pytest.mark.parametrize("coef_set", [S_IN, S_OUT], ids=["in", "out"])
def test_posterior_equals_brute_force(rxn, coef_set) -> None:
    """Enumerate every (k, k_hat) of the generator: the conditional law of k_hat given the source
    must equal ``type2_posterior`` exactly, and P(Bayes rule right) must equal E[bayes_em]."""
    mols = list(dict.fromkeys(rxn[0] + rxn[1] + rxn[2]))
    base = BaseRoles.of(*rxn)
    joint: dict[tuple, dict[int, Fraction]] = defaultdict(lambda: defaultdict(Fraction))
    p_k = Fraction(1, len(coef_set) ** len(mols))
    for values in itertools.product(coef_set, repeat=len(mols)):
        ks = dict(zip(mols, values, strict=True))
        for k_hat in range(1, min(values) + 1):
            joint[_key(_source(rxn, ks, k_hat))][k_hat] += p_k / min(values)
    p_right = Fraction(0)
    expected_em = Fraction(0)
    for key, law in joint.items():
        p_obs = sum(law.values())
        src = [Term(c, m) for m, c in key]
        post = type2_posterior(src, base, coef_set)
        assert post == {k: v / p_obs for k, v in law.items()}
        assert math.isclose(type2_log_evidence(src, base, coef_set), math.log(p_obs), rel_tol=1e-12)
        p_right += law.get(bayes_extent(post), Fraction(0))
        expected_em += p_obs * bayes_em(post)
    assert p_right == expected_em
    assert 0 < p_right <= 1


@pytest.mark.unit
@pytest.mark.parametrize("coef_set", [S_IN, S_OUT], ids=["in", "out"])
def test_monte_carlo(coef_set) -> None:
    """Simulate the generator: empirical accuracy of the Bayes rule ~ mean exact max posterior."""
    rng = random.Random(11)
    n = 1500
    hits = 0
    exact = Fraction(0)
    for i in range(n):
        rxn = REACTIONS[i % len(REACTIONS)]
        line = gen_type2(rng, rxn, coef_set)
        base = BaseRoles.from_meta(line["src"], line["src_roles"], line["nu"])
        assert sorted(base.products) == sorted(rxn[2])
        post = type2_posterior(line["src"], base, coef_set)
        hits += bayes_extent(post) == line["xi"]
        exact += bayes_em(post)
    p = float(exact / n)
    sigma = math.sqrt(p * (1 - p) / n)
    assert abs(hits / n - p) < 4 * sigma + 1e-9


@pytest.mark.unit
def test_tie_goes_to_smaller_and_simple_case() -> None:
    # A -> B, S_in; source {5}A.{2}B: k_hat=1 -> k_B=3 (min 3); k_hat=2 -> k_B=4 (min 4); k_hat=3 -> k_B=5.
    base = BaseRoles.of(["A"], [], ["B"])
    post = type2_posterior([Term(5, "A"), Term(2, "B")], base, S_IN)
    assert post == {1: Fraction(20, 47), 2: Fraction(15, 47), 3: Fraction(12, 47)}
    assert bayes_extent(post) == 1 and bayes_em(post) == Fraction(20, 47)
    # Product absent: k_B = k_hat, so k_hat must lie in S (S_out here) and not exceed k_A.
    post = type2_posterior([Term(7, "A")], base, S_OUT)
    assert post == {6: Fraction(7, 13), 7: Fraction(6, 13)}
    assert bayes_extent(post) == 6
    # A tie: min k is k_A = k_C = 3 for both k_hat = 1 (k_B = 4) and k_hat = 2 (k_B = 5).
    post = type2_posterior([Term(3, "A"), Term(3, "C"), Term(3, "B")], BaseRoles.of(["A", "C"], [], ["B"]), S_IN)
    assert post == {1: Fraction(1, 2), 2: Fraction(1, 2)}
    assert bayes_extent(post) == 1


@pytest.mark.unit
def test_inconsistent_source_and_type1() -> None:
    base = BaseRoles.of(["A"], [], ["B"])
    with pytest.raises(BalanceError):
        type2_posterior([Term(3, "A")], base, S_OUT)  # k_A = 3 is not in S_out
    with pytest.raises(BalanceError):
        type2_posterior([Term(3, "C")], base, S_IN)
    assert type1_extent([Term(4, "A"), Term(4, "B")]) == 4
    assert limiting_extent({"A": 7, "B": 9}, {"A": -2, "B": -1, "C": 1}) == 3


@pytest.mark.unit
def test_log_evidence_tells_roles_apart() -> None:
    """S_out: a term written with 3 cannot be a reagent (k >= 6) but can be an excess product (k - k_hat)."""
    src = [Term(8, "A"), Term(7, "B"), Term(3, "P")]
    as_product = BaseRoles.of(["A", "B"], [], ["P"])
    as_reagent = BaseRoles.of(["A", "B"], ["P"], ["Q"])
    assert type2_log_evidence(src, as_product, S_OUT) > float("-inf")
    assert type2_log_evidence(src, as_reagent, S_OUT) == float("-inf")
    # S_in: both explain the source, and the numbers differ
    src_in = [Term(4, "A"), Term(5, "B"), Term(2, "P")]
    a = type2_log_evidence(src_in, as_product, S_IN)
    b = type2_log_evidence(src_in, as_reagent, S_IN)
    assert a > float("-inf") and b > float("-inf") and a != b
