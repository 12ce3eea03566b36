"""Three-membered rings of a molecule and the ones a reaction forms."""

from __future__ import annotations

import pytest

from gnn_chemalgebra.chem.rings import new_small_rings, small_rings

pytestmark = pytest.mark.unit


def test_ring_kinds_are_named_by_their_elements() -> None:
    assert small_rings("C1CO1") == ("CCO",)
    assert small_rings("c1ccc(CN2CC2)cc1") == ("CCN",)
    assert small_rings("CC1CC1C1CO1") == ("CCC", "CCO")
    assert small_rings("C1CCOC1") == ()  # five-membered: not strained
    assert small_rings("C1CCOC1", size=5) == ("CCCCO",)
    assert small_rings("not a smiles((") == ()


def test_a_ring_the_reactants_had_is_not_new() -> None:
    # epoxide opening keeps no ring; an aziridine written from an epoxide and an amine is a new one
    assert new_small_rings("OCCNCc1ccccc1", ["C1CO1", "NCc1ccccc1"]) == []
    assert new_small_rings("c1ccc(CN2CC2)cc1", ["C1CO1", "NCc1ccccc1"]) == ["CCN"]
    # a cyclopropyl amine acylated: the ring came in with the amine
    assert new_small_rings("CC(=O)NC1CC1", ["CC(=O)Cl", "NC1CC1"]) == []
    # two epoxides made from one: one new, counted once
    assert new_small_rings("C1OC1C1CO1", ["C1CO1"]) == ["CCO"]
