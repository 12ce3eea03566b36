"""Size limits of a predict line: each limit refuses with one line naming it, its flag and the offending term;
heavy atoms are counted as RDKit counts them; nothing but an InputError ever comes out of a check."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdkit import Chem

from gnn_chemalgebra.chem.bag import Term
from gnn_chemalgebra.chem.limits import (
    DEFAULT_MAX_ATOMS,
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_MOLECULES,
    DEFAULT_MAX_TOTAL_ATOMS,
    Limits,
    check_line,
    check_text,
    formula_heavy_atoms,
    limit_error,
    line_sizes,
    smiles_heavy_atoms,
)
from gnn_chemalgebra.errors import InputError

pytestmark = pytest.mark.unit

SMILES = [
    "C",
    "[H][H]",
    "[H]",
    "[2H]C([2H])([2H])[2H]",
    "[H+]",
    "[H-].[Na+]",
    "c1ccc2[nH]ccc2c1",
    "ClC(Cl)Cl",
    "BrCCBr",
    "OB(O)c1ccncc1",
    "[Hg+2]",
    "[Hf]",
    "C[S@@](=O)c1ccccc1",
    "Sc1ccccc1",  # S then aromatic c, not scandium
    "[Sc]",
    "[se]1cccc1",
    "CC(=O)[O-].[NH4+]",
    "[13CH4]",
    "O=[N+]([O-])c1cc(F)c(F)cc1F",
    "CCN(CC)CC",
    "C[C@H](N)C(=O)O",
    "F/C=C/F",
    "C1CC2CCC1C2",
    "C%10CCCCC%10",
    "[O][Cl]->[Na+]",
    "*C(=O)O",
    "[*]CC",
    "I[I-]I",
    "[Pd]",
    "CC12CCC3C(CCC4=CC(=O)CCC34C)C1CCC2=O",
]


@pytest.mark.parametrize("smiles", SMILES)
def test_smiles_heavy_atoms_is_rdkit_s(smiles: str) -> None:
    mol = Chem.MolFromSmiles(smiles)
    assert mol is not None, smiles
    assert smiles_heavy_atoms(smiles) == mol.GetNumHeavyAtoms()


@pytest.mark.parametrize(
    "formula,heavy", [("H2O", 1), ("C6H6", 6), ("C2000H4002", 2000), ("H4N+", 1), ("CuSO4*5H2O", 11), ("D2O", 1)]
)
def test_formula_heavy_atoms(formula: str, heavy: int) -> None:
    assert formula_heavy_atoms(formula) == heavy


def test_within_the_defaults_is_none() -> None:
    line = "{1}CC(=O)Cl.{1}NCc1ccccc1.{2}CCN(CC)CC"
    terms = [Term(1, "CC(=O)Cl"), Term(1, "NCc1ccccc1"), Term(2, "CCN(CC)CC")]
    assert check_text(line, Limits()) is None
    assert check_line(line, terms, Limits()) is None
    formulas = [Term(1, "C7H8O"), Term(1, "C14H13ClN4O")]
    assert check_line("{1}C7H8O.{1}C14H13ClN4O", formulas, Limits(), "formula") is None


def test_each_limit_refuses_with_its_flag_and_numbers() -> None:
    chain = "C" * (DEFAULT_MAX_ATOMS + 1)
    why = check_line(chain, [Term(1, chain)], Limits())
    assert why is not None and "\n" not in why
    assert f"{DEFAULT_MAX_ATOMS + 1:,} heavy atoms" in why and "--max-atoms" in why and f"{DEFAULT_MAX_ATOMS:,}" in why

    formula = f"C{DEFAULT_MAX_ATOMS + 5}H{2 * DEFAULT_MAX_ATOMS + 12}"
    why = check_line(formula, [Term(1, formula)], Limits(), "formula")
    assert why is not None and "--max-atoms" in why and formula in why

    mols = [Term(1, "C" * (k + 1)) for k in range(DEFAULT_MAX_MOLECULES + 1)]
    text = ".".join(f"{{1}}{t.mol}" for t in mols)
    why = check_line(text, mols, Limits(max_chars=0, max_total_atoms=0))
    assert why is not None and "--max-molecules" in why and f"{DEFAULT_MAX_MOLECULES + 1:,} molecules" in why

    per = DEFAULT_MAX_ATOMS
    n = DEFAULT_MAX_TOTAL_ATOMS // per + 1
    big = [Term(1, "C" * per + "O" * 0) for _ in range(n)]
    why = check_line("x", big, Limits(max_chars=0))
    assert why is not None and "--max-total-atoms" in why and f"{n * per:,} heavy atoms" in why

    long = "C" * (DEFAULT_MAX_CHARS + 1)
    why = check_text(long, Limits())
    assert why is not None and "--max-chars" in why and f"{DEFAULT_MAX_CHARS + 1:,} characters" in why


def test_the_offending_term_is_cut() -> None:
    chain = "C" * 50_000
    why = check_line(chain, [Term(1, "CCO"), Term(1, chain)], Limits(max_chars=0))
    assert why is not None and len(why) < 300 and "50,000 heavy atoms" in why
    err = limit_error(chain, [Term(1, chain)], Limits(max_chars=0))
    assert isinstance(err, InputError) and err.term == chain  # the whole term is kept; its message cuts it
    located = err.located("in.txt", 7)
    assert str(located).startswith("in.txt:7: molecule has 50,000 heavy atoms")


def test_the_character_limit_is_checked_before_anything_is_parsed() -> None:
    huge = "C" * 10_000_000 + "(((("  # not even a SMILES: the raw check does not care
    start = time.perf_counter()
    why = check_line(huge, None, Limits())
    assert time.perf_counter() - start < 1.0
    assert why is not None and "10,000,004 characters" in why and len(why) < 300


def test_zero_lifts_a_limit_and_options_replace_defaults() -> None:
    chain = "C" * 5_000
    assert check_line(chain, [Term(1, chain)], Limits.none()) is None
    lim = Limits.from_options(max_atoms=6000, max_chars=0, max_total_atoms=0)
    assert lim.max_molecules == DEFAULT_MAX_MOLECULES and lim.max_atoms == 6000
    assert check_line(chain, [Term(1, chain)], lim) is None
    assert check_line(chain, [Term(1, chain)], Limits.from_options(max_atoms=4999, max_chars=0)) is not None


@pytest.mark.parametrize("bad", [-1, 1.5, "10", True, None])
def test_a_bad_limit_is_one_line_naming_the_flag(bad: object) -> None:
    with pytest.raises(InputError, match=r"--max-molecules must be a whole number >= 0"):
        Limits(max_molecules=bad)  # type: ignore[arg-type]


def test_line_sizes() -> None:
    s = line_sizes("{1}CCO.{2}c1ccccc1", [Term(1, "CCO"), Term(2, "c1ccccc1")])
    assert (s.chars, s.molecules, s.max_atoms, s.total_atoms, s.largest) == (18, 2, 6, 9, "c1ccccc1")
    assert line_sizes("", []).molecules == 0


def test_unknown_representation_is_an_input_error() -> None:
    with pytest.raises(InputError, match="unknown representation"):
        check_line("C", [Term(1, "C")], Limits(), "inchi")


_SMILES_CHARS = st.sampled_from(list("CNOSPFIcnosp()[]=#@+-123456789%.*/\\:HBrClNa") + ["Cl", "Br", "[nH]", "[Hg]"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    mols=st.lists(st.lists(_SMILES_CHARS, min_size=1, max_size=3000).map("".join), min_size=1, max_size=60),
    repr=st.sampled_from(["smiles", "formula"]),
    limits=st.builds(
        Limits,
        max_atoms=st.integers(0, 500),
        max_molecules=st.integers(0, 80),
        max_chars=st.integers(0, 50_000),
        max_total_atoms=st.integers(0, 2000),
    ),
)
def test_random_big_molecules_give_a_line_or_none_never_another_error(
    mols: list[str], repr: str, limits: Limits
) -> None:
    text = ".".join(mols)
    try:
        why = check_line(text, [Term(1, m) for m in mols], limits, repr)
    except InputError as err:  # a formula check of a string that is no formula
        assert repr == "formula" and "\n" not in str(err)
        return
    assert why is None or ("\n" not in why and len(why) < 600)


@settings(max_examples=100, deadline=None)
@given(
    n=st.integers(1, 20_000),
    element=st.sampled_from(["C", "N", "O", "Cl", "Br", "Si", "Pt"]),
    h=st.integers(0, 50_000),
)
def test_random_big_formulas_are_counted_exactly(n: int, element: str, h: int) -> None:
    formula = f"{element}{n}" + (f"H{h}" if h else "")
    assert formula_heavy_atoms(formula) == n
    why = check_line(formula, [Term(1, formula)], Limits(), "formula")
    assert (why is None) == (n <= DEFAULT_MAX_ATOMS)
