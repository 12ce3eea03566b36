"""The leftover of a reaction with given products as a real molecule made from a reactant: a piece cut from it, or
a spent reagent, balanced by the exact algebra."""

from __future__ import annotations

import pytest

from gnn_chemalgebra.algebra.leftover_molecules import close_with_leftover, leftover_molecules
from gnn_chemalgebra.chem.smiles import canonical_smiles

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("reactants", "products", "leftover", "coefficient"),
    [
        ("CC1(C)OCC(C)O1.O", "CC(C)=O", "CC(O)CO", 1),  # acetal hydrolysis: the diol (an atom taken out)
        ("CCC(=O)NC.[OH-]", "CN", "CCC(=O)[O-]", 1),  # amide cleaved by hydroxide: the carboxylate
        ("C=CC.O=C(OO)c1ccccc1", "CC1CO1", "O=C(O)c1ccccc1", 1),  # epoxidation: the peracid's acid
        ("C[Si](C)(C)OCCC.F", "OCCC", "C[Si](C)(C)F", 1),  # silyl ether cleaved by HF: the silyl fluoride
        ("CC=O.C=P(c1ccccc1)(c1ccccc1)c1ccccc1", "C=CC", "O=P(c1ccccc1)(c1ccccc1)c1ccccc1", 1),  # Wittig
        ("O=C(O)c1ccccc1.NCC.CC(C)N=C=NC(C)C", "CCNC(=O)c1ccccc1", "CC(C)NC(=O)NC(C)C", 1),  # DIC: its urea
        ("C=CCC.[O-][O+]=O.CSC", "C=O.CCC=O", "CS(C)=O", 1),  # ozonolysis: DMSO (balances many ways)
        ("CC(=O)OCC(OC(C)=O)C.[OH-]", "CC(O)CO", "CC(=O)[O-]", 2),  # a diester: two carboxylates
    ],
)
def test_the_leftover_is_a_real_molecule(reactants: str, products: str, leftover: str, coefficient: int) -> None:
    got = close_with_leftover(reactants.split("."), products.split("."))
    assert got is not None
    assert got.species[-1] == canonical_smiles(leftover)
    assert got.nu[-1] == coefficient
    assert all(v < 0 for v in got.nu[: len(reactants.split("."))])  # every reactant consumed


def test_no_piece_closes_a_reaction_that_needs_an_outside_molecule() -> None:
    """A nitro group reduced without a reductant: no piece of the reactant supplies the hydrogen."""
    assert close_with_leftover(["Cc1ccc([N+](=O)[O-])cc1"], ["Cc1ccc(N)cc1"]) is None


def test_candidates_are_not_the_reactants() -> None:
    pieces = leftover_molecules(["CCOC(C)=O", "O"])
    assert "CCO" in pieces and "CC(=O)O" in pieces
    assert canonical_smiles("CCOC(C)=O") not in pieces and "O" not in pieces


def test_pieces_are_molecules_not_radicals_or_metal_fragments() -> None:
    """A permanganate cut at a Mn-O bond is no molecule a chemist writes: no candidate holds a metal or a radical."""
    pieces = leftover_molecules(["CCO", "[O-][Mn](=O)(=O)=O", "C[CH2]"])
    assert pieces and not any("Mn" in p for p in pieces)
    assert canonical_smiles("C[CH2]") not in pieces
