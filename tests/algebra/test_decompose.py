"""``target = source + xi * nu`` on lines from an independent copy of the generator."""

from __future__ import annotations

import random

import pytest
from _algebra_synth import REACTIONS, gen_type1, gen_type2

from gnn_chemalgebra.algebra.decompose import apply_extent, bag_multiset, decompose, nu_gcd
from gnn_chemalgebra.algebra.extent import S_IN, S_OUT
from gnn_chemalgebra.chem.bag import Term
from gnn_chemalgebra.errors import BalanceError


@pytest.mark.unit
@pytest.mark.parametrize("gen", [gen_type1, gen_type2])
def test_round_trip(gen) -> None:
    rng = random.Random(7)
    for i in range(400):
        rxn = REACTIONS[i % len(REACTIONS)]
        line = gen(rng, rxn, S_IN if i % 2 else S_OUT)
        d = decompose(line["src"], line["tgt"])
        assert nu_gcd(line["nu"]) == 1
        assert d.nu == line["nu"] and d.xi == line["xi"]
        want = bag_multiset(line["tgt"])
        assert bag_multiset(apply_extent(line["src"], d.nu, d.xi, line["src_roles"])) == want
        assert bag_multiset(apply_extent(line["src"], d.nu, d.xi)) == want


@pytest.mark.unit
def test_heuristic_documented_failure_and_roles_fix() -> None:
    # M is reagent and product with k == xi: the product term is absent from the source.
    src = [Term(2, "A"), Term(2, "M")]
    roles = ["reactant", "reagent"]
    nu = {"A": -1, "M": 1}
    assert bag_multiset(apply_extent(src, nu, 2, roles)) == bag_multiset([Term(2, "M"), Term(2, "M")])
    assert bag_multiset(apply_extent(src, nu, 2)) == bag_multiset([Term(4, "M")])


@pytest.mark.unit
def test_errors() -> None:
    with pytest.raises(BalanceError):
        decompose([Term(1, "A")], [Term(1, "A")])
    with pytest.raises(BalanceError):
        apply_extent([Term(1, "A")], {"A": -1, "B": 1}, 2)
    with pytest.raises(BalanceError):
        apply_extent([Term(1, "A")], {"A": -1}, 0)
