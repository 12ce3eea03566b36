"""Reaction lines ``reactants>reagents>products``: the sides they give, what they refuse, how the sides travel."""

from __future__ import annotations

import copy
import pickle

import pytest

from gnn_chemalgebra.chem.bag import Term
from gnn_chemalgebra.chem.bagfile import parse_reaction_input, read_line, read_reaction_lines
from gnn_chemalgebra.chem.molecule import composition
from gnn_chemalgebra.chem.reaction import (
    ReactionSides,
    ReactionTerms,
    cover_multipliers,
    given_sides,
)
from gnn_chemalgebra.errors import InputError

pytestmark = pytest.mark.unit


def test_reagents_are_source_terms_and_products_are_not() -> None:
    inp = parse_reaction_input("CC(=O)Cl.OCC>N(CC)(CC)CC>CC(=O)OCC")
    assert inp.repr == "smiles" and inp.terms == [Term(1, "CC(=O)Cl"), Term(1, "CCO"), Term(1, "CCN(CC)CC")]
    assert inp.sides == ReactionSides(("CC(=O)Cl", "CCO"), ("CCN(CC)CC",), ("CCOC(C)=O",), "smiles")
    assert inp.sides.role("CCN(CC)CC") == "reagent" and inp.sides.role("CCO") == "reactant"
    assert inp.sides.role("CCOC(C)=O") == "product" and inp.sides.role("O") is None


def test_a_bag_gives_no_sides() -> None:
    inp = parse_reaction_input("{2}CC(=O)Cl.{2}NCc1ccccc1")
    assert inp.sides is None and given_sides(inp.terms) is None and type(inp.terms) is list


def test_duplicates_stay_terms_but_sides_list_each_molecule_once() -> None:
    inp = parse_reaction_input("CC.CC>O>")
    assert inp.terms == [Term(1, "CC"), Term(1, "CC"), Term(1, "O")]
    assert inp.sides.reactants == ("CC",) and inp.sides.reagents == ("O",) and inp.sides.products == ()


def test_formula_reaction_lines_read_as_formulas() -> None:
    inp = parse_reaction_input("C2H3ClO.C6H7NO>C6H15N>C8H9NO2")
    assert inp.repr == "formula" and inp.terms == [Term(1, "C2H3ClO"), Term(1, "C6H7NO"), Term(1, "C6H15N")]
    assert inp.sides == ReactionSides(("C2H3ClO", "C6H7NO"), ("C6H15N",), ("C8H9NO2",), "formula")
    assert read_line("CC>O>").kind == "smiles"  # SMILES that only happen to parse as formulas stay SMILES


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("CC(=O)Cl>Nc1ccc(O)cc1>CC(=O)Oc1ccc(N)cc1", "the products hold N, which no reactant supplies"),
        ("CC>>CCCl", "the products hold Cl, which no reactant supplies"),
        ("C2H3ClO>C6H7NO>C8H9NO2", "the products hold N, which no reactant supplies"),
        ("CCO>>CCO", "both reactant and product"),
        ("CCO.O>O>", "both reactant and reagent"),
        ("CCO>O>O", "both reagent and product"),
    ],
)
def test_lines_no_by_product_can_balance_are_refused_located(line: str, reason: str) -> None:
    with pytest.raises(InputError) as info:
        parse_reaction_input(line, path="in.txt", lineno=3)
    assert reason in info.value.reason and str(info.value).startswith("in.txt:3: ")
    assert "neither SMILES" not in info.value.reason  # the line's own fault, said once


def test_refused_sides_in_a_file_are_refused_lines() -> None:
    read = read_reaction_lines(["CC(=O)Cl>NCc1ccccc1>", "CC>>CCCl"], path="f.smi", skip_invalid=True)
    assert [n for n, _ in read.inputs] == [1]
    (err,) = read.refused
    assert err.line == 2 and "Cl, which no reactant supplies" in err.reason


def test_sides_travel_with_the_terms() -> None:
    terms = parse_reaction_input("CC(=O)Cl>NCc1ccccc1>").terms
    assert isinstance(terms, ReactionTerms)
    for again in (pickle.loads(pickle.dumps(terms)), copy.copy(terms), copy.deepcopy(terms)):
        assert again == terms and given_sides(again) == given_sides(terms)


def _f(*mols: str) -> list:
    return [composition(m, "formula") for m in mols]


@pytest.mark.parametrize(
    ("reactants", "products", "mult"),
    [
        (("C2H3ClO", "C6H7NO"), ("C8H9NO2",), [1, 1]),
        (("C2H6",), ("C4H10",), [2]),
        (("C2H4",), ("C10H22",), [6]),  # 22 H need six C2H4
        (("CH4", "O2"), ("CO2",), [1, 1]),
        (("C2H6",), ("C2H4Cl2",), None),
    ],
)
def test_cover_multipliers_are_the_smallest_that_hold_the_products(
    reactants: tuple[str, ...], products: tuple[str, ...], mult: list[int] | None
) -> None:
    assert cover_multipliers(_f(*reactants), _f(*products)) == mult


def test_cover_multipliers_past_the_search_take_a_greedy_cover() -> None:
    got = cover_multipliers(_f("CH4", "H2O", "NH3"), _f("C60"), work=30)
    assert got == [60, 1, 1]
