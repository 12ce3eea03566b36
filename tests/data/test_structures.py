"""The structure behind a training formula (data/structures.py): the most frequent SMILES per formula, counted once
per line with a fixed tie rule, and its folded Morgan counts."""

from __future__ import annotations

import numpy as np
import pytest

from gnn_chemalgebra.data.dataset import write_toy_variant
from gnn_chemalgebra.data.structures import formula_structures, morgan_counts, read_smiles_molecules, smiles_variant
from gnn_chemalgebra.errors import InputError

pytestmark = pytest.mark.unit


def test_the_most_frequent_structure_wins_and_ties_are_fixed() -> None:
    lines = [["CCO", "CCO", "O"], ["COC", "CC(=O)Cl"], ["COC"], ["CCO"], ["OC(C)=O"], ["CC(=O)O"]]
    got = formula_structures(lines)
    # ethanol twice (one line counts once), dimethyl ether twice: a tie broken by the smaller string
    assert got["C2H6O"] == "CCO"
    assert got["H2O"] == "O" and got["C2H3ClO"] == "CC(=O)Cl"
    assert got["C2H4O2"] == "CC(=O)O"  # two spellings of acetic acid, one line each: the smaller string
    assert formula_structures([["CCO"], ["COC"], ["COC"]])["C2H6O"] == "COC"


def test_fingerprints_are_counts_and_unknown_rows_are_zero() -> None:
    fp = morgan_counts(["CCCCCC", None, "not a smiles", "CC(=O)Cl"], 64)
    assert fp.shape == (4, 64) and fp.dtype == np.uint8
    assert fp[0].max() >= 2  # hexane repeats its CH2 environments: counts, not bits
    assert not fp[1].any() and not fp[2].any() and fp[3].any()
    assert morgan_counts([], 16).shape == (0, 16)


def test_the_smiles_twin_is_read_and_required(tmp_path) -> None:
    assert smiles_variant("ChemAlgebra_F_T2_x5") == "ChemAlgebra_S_T2_x5"
    with pytest.raises(InputError):
        smiles_variant("ChemAlgebra_S_T1_x1")
    with pytest.raises(InputError, match="missing"):
        read_smiles_molecules(tmp_path, "ChemAlgebra_F_T1_x1", "train")
    write_toy_variant(tmp_path, "ChemAlgebra_S_T1_x1", {"train": 5})
    lines = read_smiles_molecules(tmp_path, "ChemAlgebra_F_T1_x1", "train")
    assert len(lines) == 5 and all(lines) and all(isinstance(m, str) for ln in lines for m in ln)
