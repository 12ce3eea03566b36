"""Completing a reaction with given products: smallest signed integer balancings, and why none exists."""

from __future__ import annotations

import pytest

from gnn_chemalgebra.algebra.complete import (
    complete,
    leftover_of_cover,
    smallest_signed_balancing,
    why_unbalanced,
)
from gnn_chemalgebra.algebra.matrix import element_matrix, mat_vec
from gnn_chemalgebra.chem.molecule import composition

pytestmark = pytest.mark.unit


def _c(repr: str, *mols: str) -> dict:
    return {m: composition(m, repr) for m in mols}


@pytest.mark.parametrize(
    ("reactants", "products", "byproducts", "nu"),
    [
        (("CC(=O)Cl", "Nc1ccc(O)cc1"), ("CC(=O)Oc1ccc(N)cc1",), ("Cl",), (-1, -1, 1, 1)),
        (("CC",), ("CCCC",), ("[H][H]",), (-2, 1, 1)),
        (("C=C", "[H][H]"), ("CC",), (), (-1, -1, 1)),
        (("CC(=O)O", "OCC"), ("CCOC(C)=O",), ("O",), (-1, -1, 1, 1)),
        (("[H][H]", "O=O"), ("O",), (), (-2, -1, 2)),
    ],
)
def test_complete_finds_the_smallest_balancing(
    reactants: tuple[str, ...], products: tuple[str, ...], byproducts: tuple[str, ...], nu: tuple[int, ...]
) -> None:
    done = complete(_c("smiles", *reactants), _c("smiles", *products), _c("smiles", *byproducts))
    assert done is not None and done.nu == nu and done.unique
    assert done.species == (*reactants, *products, *byproducts)
    _, rows = element_matrix([composition(m, "smiles") for m in done.species])
    assert mat_vec(rows, list(done.nu)) == [0] * len(rows)


def test_complete_refuses_what_does_not_balance_with_every_sign_kept() -> None:
    assert complete(_c("smiles", "CC"), _c("smiles", "CCCC")) is None  # 2 CC -> CCCC leaves H2
    assert complete(_c("smiles", "CC", "O"), _c("smiles", "CC")) is None  # water would have to stay at zero
    assert complete(_c("smiles", "CC"), _c("smiles", "CCCC"), _c("smiles", "CC")) is None  # one role each


def test_a_balancing_of_two_dimensions_gives_the_smallest_point() -> None:
    """Two independent reactions (A -> C, B -> D and B -> 2 E): every species must take part, the least total
    coefficient wins and the result says it is not unique."""
    comps = [{"X": 1}, {"Y": 2}, {"X": 1}, {"Y": 2}, {"Y": 1}]
    got = smallest_signed_balancing(comps, [-1, -1, 1, 1, 1])
    assert got == ([-1, -2, 1, 1, 2], False)
    assert smallest_signed_balancing(comps, [-1, -1, 1, 1, -1]) == ([-1, -1, 1, 2, -2], False)


def test_signs_are_checked() -> None:
    with pytest.raises(ValueError):
        smallest_signed_balancing([{"H": 2}], [0])
    assert smallest_signed_balancing([{"H": 2}, {"H": 2}], [1, 1]) is None


def test_leftover_of_cover_is_what_the_line_read_once_leaves() -> None:
    mult, rest = leftover_of_cover(_c("formula", "C2H3ClO", "C6H7NO"), _c("formula", "C8H9NO2"))
    assert mult == [1, 1] and rest == {"H": 1, "Cl": 1}
    assert leftover_of_cover(_c("formula", "C2H6"), _c("formula", "C2H5Cl")) is None


def test_why_unbalanced_names_the_elements() -> None:
    why = why_unbalanced(_c("smiles", "CC"), _c("smiles", "CCCC"))
    assert why == "cannot be balanced: H does not balance (2 CC -> CCCC leaves H2); no by-product closes it"
    why = why_unbalanced(_c("smiles", "CCCC"), _c("smiles", "CC"), ["O", "Cl"])
    assert "C, H do not balance (CCCC -> CC leaves C2H4)" in why and "(O, Cl)" in why
    assert "the products hold Cl" in why_unbalanced(_c("smiles", "CC"), _c("smiles", "CCCl"))
    assert "the charge does not balance" in why_unbalanced(_c("smiles", "[Na+]"), _c("smiles", "[Na]"))
