"""Charge-tagged atom labels, explicit hydrogens, and the leftover-chain rule."""

from __future__ import annotations

from collections import Counter

import pytest
from rdkit import Chem

from gnn_chemalgebra.chem.composition import (
    atom_label,
    charge_suffix,
    element_view,
    mol_composition,
    smiles_composition,
    split_label,
    sum_compositions,
)
from gnn_chemalgebra.chem.leftover import chain_smiles, leftover_molecule
from gnn_chemalgebra.chem.molecule import composition, smiles_to_formula
from gnn_chemalgebra.errors import ChemistryError

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("smiles", "label"),
    [("[O-]", "O-"), ("[NH4+]", "N+"), ("[Fe+2]", "Fe+2"), ("[S-2]", "S-2"), ("C", "C"), ("[13CH4]", "C")],
)
def test_atom_label(smiles: str, label: str) -> None:
    assert atom_label(Chem.MolFromSmiles(smiles).GetAtomWithIdx(0)) == label


@pytest.mark.parametrize(
    ("label", "parts"),
    [("O-", ("O", -1)), ("N+", ("N", 1)), ("Fe+2", ("Fe", 2)), ("S-2", ("S", -2)), ("Cl", ("Cl", 0))],
)
def test_split_label(label: str, parts: tuple[str, int]) -> None:
    assert split_label(label) == parts
    sym, q = parts
    assert sym + charge_suffix(q) == label


@pytest.mark.parametrize("label", ["", "+", "-2", "O+x", "Fe+2a"])
def test_split_label_malformed(label: str) -> None:
    with pytest.raises(ChemistryError):
        split_label(label)


def test_explicit_hydrogens_counted() -> None:
    assert smiles_composition("CCO") == Counter({"C": 2, "H": 6, "O": 1})
    assert smiles_composition("[NH4+]") == Counter({"N+": 1, "H": 4})
    assert smiles_composition("[H]") == Counter({"H": 1})
    assert smiles_composition("[H][H]") == Counter({"H": 2})
    assert smiles_composition("[2H]C([2H])([2H])[2H]") == Counter({"C": 1, "H": 4})
    assert smiles_composition("O=S(=O)([O-])[O-].[Na+].[Na+]") == Counter({"S": 1, "O": 2, "O-": 2, "Na+": 2})


def test_heavy_atoms_first_then_h_in_rdkit_order() -> None:
    """First-seen label order (which the leftover rule relies on): heavy atoms, then added H."""
    assert list(smiles_composition("OCC")) == ["O", "C", "H"]
    assert list(mol_composition(Chem.MolFromSmiles("[O-]C(=O)C"))) == ["O-", "C", "O", "H"]


def test_element_view_and_molecule_composition() -> None:
    comp = smiles_composition("[NH4+].[NH4+].[O-]S(=O)(=O)[O-]")
    view = element_view(comp)
    assert view == Counter({"N": 2, "H": 8, "S": 1, "O": 4})  # net charge 0 dropped
    assert element_view(smiles_composition("[Fe+2]")) == Counter({"Fe": 1, "charge": 2})
    assert composition("[O-]C=O", "smiles") == composition("CHO2-", "formula")
    assert smiles_to_formula("[O-]C=O") == "CHO2-"


def test_sum_compositions() -> None:
    total = sum_compositions([(smiles_composition("O"), 2), (smiles_composition("[H][H]"), 1)])
    assert total == Counter({"O": 2, "H": 6})


@pytest.mark.parametrize(
    ("labels", "chain", "smiles"),
    [
        (["C", "N"], "[C][N]", "[C][N]"),
        (["O", "O", "O-"], "[O][O][O-]", "[O]O[O-]"),
        (["H"], "[H]", "[H]"),
        (["Cl", "H"], "[Cl][H]", "Cl"),
        (["Fe+2"], "[Fe+2]", "[Fe+2]"),
    ],
)
def test_leftover_chain(labels: list[str], chain: str, smiles: str) -> None:
    assert chain_smiles(labels) == chain
    assert leftover_molecule(Counter(labels)) == smiles


def test_leftover_rejected_chain_is_none() -> None:
    assert leftover_molecule(Counter({"H": 3})) is None  # [H][H][H]: H valence 2
    assert leftover_molecule(Counter()) is None


def test_leftover_from_counter_difference_keeps_order() -> None:
    """``R - P`` keeps R's first-seen order and drops non-positive counts."""
    r = smiles_composition("OCC(=O)[O-]")  # O, C, O-, H
    p = smiles_composition("C=O")  # C, O, H
    diff = r - p
    assert list(diff.elements()) == ["O", "C", "O-", "H"]
    assert chain_smiles(diff.elements()) == "[O][C][O-][H]"
    assert leftover_molecule(diff) is None  # O- bonded twice: RDKit rejects, the reaction is dropped
