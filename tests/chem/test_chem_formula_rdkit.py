"""Formula writer/parser agree with RDKit's CalcMolFormula on real USPTO-MIT molecules."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest
from rdkit import Chem
from rdkit.Chem.rdMolDescriptors import CalcMolFormula

from gnn_chemalgebra.chem.composition import element_view, smiles_composition
from gnn_chemalgebra.chem.formula import parse_formula, write_formula
from gnn_chemalgebra.chem.smiles import unmapped_canonical
from gnn_chemalgebra.errors import ChemistryError

DATA = Path(__file__).resolve().parents[2] / "data" / "uspto_mit_mapped" / "test.txt.gz"
N_LINES = 4000  # reactions read (the first ones of the file)
N_MOLS = 3000  # distinct molecules sampled, seeded


def _sample_molecules() -> list[str]:
    """A seeded sample of distinct canonical, unmapped molecules from the bundled test reactions."""
    raw: set[str] = set()
    with gzip.open(DATA, "rt") as fh:
        for i, line in enumerate(fh):
            if i >= N_LINES:
                break
            reactants, _, products = line.split()[0].split(">")
            raw.update(reactants.split("."))
            raw.update(products.split("."))
    mols: set[str] = set()
    for s in sorted(raw):
        m = Chem.MolFromSmiles(s)
        if m is not None:
            mols.add(unmapped_canonical(m))
    return random.Random(0).sample(sorted(mols), min(N_MOLS, len(mols)))


@pytest.mark.integration
@pytest.mark.skipif(not DATA.exists(), reason="bundled USPTO-MIT test data missing")
def test_formula_agrees_with_calcmolformula_on_uspto() -> None:
    mols = _sample_molecules()
    assert len(mols) == N_MOLS
    bad: list[tuple[str, str, str]] = []
    for smi in mols:
        f = CalcMolFormula(Chem.MolFromSmiles(smi))
        parsed = parse_formula(f)
        if write_formula(parsed) != f:
            bad.append((smi, f, "write"))
        if parsed != element_view(smiles_composition(smi)):
            bad.append((smi, f, "composition"))
    assert not bad, bad[:10]


@pytest.mark.unit
@pytest.mark.parametrize(
    "smiles",
    [
        "[2H]C",
        "[13CH4]",
        "[3H]O[3H]",
        "[2H][2H]",
        "[2H]OC([2H])([2H])[13CH3]",
        "[18OH2]",
        "[2H+]",
        "[15NH4+]",
    ],
)
def test_isotopes_merge_like_default_calcmolformula(smiles: str) -> None:
    """Default CalcMolFormula merges isotopes; our parser and the label rule do too."""
    mol = Chem.MolFromSmiles(smiles)
    f = CalcMolFormula(mol)
    assert "D" not in f and "T" not in f and "[" not in f
    assert write_formula(parse_formula(f)) == f
    assert parse_formula(f) == element_view(smiles_composition(smiles))


@pytest.mark.unit
def test_separate_isotopes_formula_symbols() -> None:
    """``separateIsotopes=True`` output: D/T read as H, bracketed isotopes rejected clearly."""
    mol = Chem.MolFromSmiles("[2H]C([2H])([2H])Cl")
    assert CalcMolFormula(mol, separateIsotopes=True) == "CD3Cl"
    assert parse_formula("CD3Cl") == parse_formula(CalcMolFormula(mol))
    assert write_formula(parse_formula("T2O")) == "H2O"
    with pytest.raises(ChemistryError, match="isotope"):
        parse_formula(CalcMolFormula(Chem.MolFromSmiles("[13CH4]"), separateIsotopes=True))
