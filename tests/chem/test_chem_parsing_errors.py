"""Bag, SMILES and formula parsers: every bad input is an InputError naming its reason and place."""

from __future__ import annotations

import pytest

from gnn_chemalgebra.chem.bag import Term, format_bag, parse_bag, parse_term
from gnn_chemalgebra.chem.formula import parse_formula, write_formula
from gnn_chemalgebra.chem.molecule import canonical, composition, detect_repr
from gnn_chemalgebra.chem.smiles import canonical_smiles, try_canonical
from gnn_chemalgebra.errors import ChemistryError, InputError

pytestmark = pytest.mark.unit

BAD_BAGS = [
    ("{0}C", "positive"),
    ("{-1}C", "not a positive integer"),
    ("{x}C", "not a positive integer"),
    ("{1.5}C", "not a positive integer"),
    ("{}C", "empty coefficient"),
    ("C", "missing '{k}'"),
    ("{1}C.O", "missing '{k}'"),
    ("{1}C..{1}O", "empty term"),
    (".{1}C", "empty term"),
    ("{1}C.", "empty term"),
    ("{1C", "unclosed"),
    ("{1{2}}C", "unclosed or nested"),
    ("1}C", "misplaced brace"),
    ("C{1}", "misplaced brace"),
    ("{1}C}", "brace inside the molecule"),
    ("{1}", "no molecule"),
    ("{1}C {1}O", "whitespace"),
    ("{1}C.{1}\tO", "whitespace"),
    ("", "empty line"),
    ("   ", "empty line"),
    ("{" + "9" * 5000 + "}C", "larger than"),
    ("{99999999999999999999}C", "larger than"),
]


@pytest.mark.parametrize(("text", "reason"), BAD_BAGS)
def test_bad_bag_reason(text: str, reason: str) -> None:
    with pytest.raises(InputError) as info:
        parse_bag(text)
    assert reason in info.value.reason


@pytest.mark.parametrize(("text", "reason"), BAD_BAGS)
def test_bad_bag_located(text: str, reason: str) -> None:
    with pytest.raises(InputError) as info:
        parse_bag(text, path="data/src.txt", line=7)
    msg = str(info.value)
    assert msg.startswith("data/src.txt:7: ")
    assert reason in msg
    assert "\n" not in msg


def test_bad_term_is_named() -> None:
    with pytest.raises(InputError) as info:
        parse_bag("{1}CC.{0}O", path="f", line=1)
    assert info.value.term == "{0}O"
    assert str(info.value) == "f:1: coefficient must be positive, got 0 (term '{0}O')"


def test_good_bags() -> None:
    assert parse_bag("{4}[H][H].{1}O=C=O.{1}[Ni]") == [Term(4, "[H][H]"), Term(1, "O=C=O"), Term(1, "[Ni]")]
    assert parse_bag("{1}C\n") == [Term(1, "C")]
    assert parse_bag("{007}C") == [Term(7, "C")]
    assert parse_bag("C.{3}O", default_coef=1) == [Term(1, "C"), Term(3, "O")]
    assert parse_term("{2}H2O") == Term(2, "H2O")
    assert format_bag(parse_bag("{1}C.{2}O.{1}[Ni]")) == "{1}C.{2}O.{1}[Ni]"


@pytest.mark.parametrize(
    "smiles", ["", "C1CC", "[Xx]", "CC(", "C foo", "C\tO", "C\x00O", "CC>>CC", ".", "C.", "[H][H][H]"]
)
def test_bad_smiles_is_chemistry_error(smiles: str) -> None:
    with pytest.raises(ChemistryError) as info:
        canonical_smiles(smiles)
    assert isinstance(info.value, InputError)
    assert info.value.term == smiles
    assert try_canonical(smiles) is None
    with pytest.raises(ChemistryError):
        canonical(smiles, "smiles")


def test_whitespace_smiles_not_silently_truncated() -> None:
    """RDKit reads ``'CCO ethanol'`` as ``CCO`` with a name; we refuse it."""
    with pytest.raises(ChemistryError, match="whitespace"):
        canonical_smiles("CCO ethanol")


def test_canonical_smiles_examples() -> None:
    assert canonical_smiles("OCC") == "CCO"
    assert canonical_smiles("[H]") == "[H]"
    assert canonical_smiles("[H][H]") == "[H][H]"
    assert canonical("C(=O)=O", "smiles") == "O=C=O"


@pytest.mark.parametrize(
    ("formula", "reason"),
    [
        ("Xx2", "unknown element symbol 'Xx'"),
        ("Qa", "unknown element symbol 'Qa'"),
        ("CH4Xx", "unknown element symbol 'Xx'"),
        ("", "empty formula"),
        ("h2o", "unexpected character 'h'"),
        ("2H2O", "unexpected character '2'"),
        ("H2O ", "whitespace"),
        ("H2O-\n", "whitespace"),
        ("H2O+0", "charge of zero"),
        ("C0", "zero count"),
        ("+", "no element"),
        ("CH3*", "dummy atom"),
        ("[13C]H4", "isotope"),
        ("C9999999999", "digits"),
        ("C٣", "unexpected character"),
        ("H2O.Na", "unexpected character '.'"),
    ],
)
def test_bad_formula_is_chemistry_error(formula: str, reason: str) -> None:
    with pytest.raises(ChemistryError) as info:
        parse_formula(formula)
    assert reason in info.value.reason
    with pytest.raises(ChemistryError):
        canonical(formula, "formula")


@pytest.mark.parametrize(
    ("formula", "canon"),
    [("H2O", "H2O"), ("OH2", "H2O"), ("ClH", "HCl"), ("H4B-", "H4B-"), ("CHO3-", "CHO3-"), ("O4S-2", "O4S-2")]
    + [("Fe+3", "Fe+3"), ("NaCl", "ClNa"), ("CH3CH2OH", "C2H6O"), ("C7H4ClNO4", "C7H4ClNO4"), ("D2O", "H2O")],
)
def test_formula_canonical(formula: str, canon: str) -> None:
    assert canonical(formula, "formula") == canon
    assert write_formula(parse_formula(canon)) == canon


def test_write_formula_rejects_bad_compositions() -> None:
    with pytest.raises(ChemistryError):
        write_formula({"C": -1})
    with pytest.raises(ChemistryError):
        write_formula({"charge": 1})
    with pytest.raises(ChemistryError):
        write_formula({"*": 1, "C": 1})


def test_unknown_repr() -> None:
    with pytest.raises(InputError, match="unknown representation"):
        canonical("C", "inchi")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="unknown representation"):
        composition("C", "inchi")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("mols", "repr"),
    [
        (["C"], "smiles"),
        (["CCO"], "smiles"),  # parses as a (non-canonical) formula C2O, but is ethanol
        (["CCC", "O"], "smiles"),
        (["C1CC1"], "smiles"),
        (["CO", "Cl"], "smiles"),
        (["O=C=O", "[Ni]"], "smiles"),
        (["H2O"], "formula"),
        (["H2O", "CN"], "formula"),
        (["C7H4ClNO4", "Na+", "H4B-"], "formula"),
        (["OH2"], "formula"),
    ],
)
def test_detect_repr(mols: list[str], repr: str) -> None:
    assert detect_repr(mols) == repr


@pytest.mark.parametrize("space", [" ", "\t", "\n", "\x0b", "\x1c", "\x85", "\xa0", "\u2003", "\u3000"])
def test_every_unicode_whitespace_is_refused(space: str) -> None:
    from gnn_chemalgebra.chem.bagfile import read_line
    from gnn_chemalgebra.chem.smiles import mol_from_smiles

    assert space.isspace()
    with pytest.raises(InputError, match="whitespace"):
        parse_term("{1}C" + space + "O")
    with pytest.raises(InputError, match="whitespace"):
        read_line("{1}CC" + space + "O.{1}O")
    with pytest.raises(ChemistryError, match="whitespace"):
        parse_formula("C2" + space + "H6")
    with pytest.raises(ChemistryError, match="whitespace"):
        mol_from_smiles("C" + space + "C")


def test_non_space_format_characters_are_not_called_whitespace() -> None:
    from gnn_chemalgebra.chem.smiles import mol_from_smiles

    for ch in ("\u200b", "\u2060", "\ufeff"):  # zero-width and format characters: str.isspace() is False
        assert not ch.isspace()
        assert parse_term("{1}C" + ch + "O").mol == "C" + ch + "O"
        with pytest.raises(ChemistryError) as err:
            mol_from_smiles("C" + ch + "O")
        assert "whitespace" not in str(err.value)
