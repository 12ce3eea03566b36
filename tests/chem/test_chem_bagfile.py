"""Bag files and ``gnnca predict`` input lines."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from gnn_chemalgebra.chem.bag import Term
from gnn_chemalgebra.chem.bagfile import (
    BagFileResult,
    ReactionInput,
    SkipReport,
    parse_reaction_input,
    read_bag_file,
)
from gnn_chemalgebra.errors import ChemistryError, InputError

pytestmark = pytest.mark.unit


def _write(tmp_path: Path, text: str, name: str = "src.txt") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_read_good_file(tmp_path: Path) -> None:
    p = _write(tmp_path, "{4}[H][H].{1}O=C=O.{1}[Ni]\n{1}C.{2}O.{1}[Ni]\n")
    bags = read_bag_file(p, "smiles")
    assert bags == [
        [Term(4, "[H][H]"), Term(1, "O=C=O"), Term(1, "[Ni]")],
        [Term(1, "C"), Term(2, "O"), Term(1, "[Ni]")],
    ]


def test_read_gzip_and_crlf(tmp_path: Path) -> None:
    p = tmp_path / "tgt.txt.gz"
    with gzip.open(p, "wt") as fh:
        fh.write("{1}H2O.{2}Na+\r\n{1}CH4\r\n")
    assert read_bag_file(p, "formula") == [[Term(1, "H2O"), Term(2, "Na+")], [Term(1, "CH4")]]


def test_default_coef(tmp_path: Path) -> None:
    p = _write(tmp_path, "C.{2}O\n")
    with pytest.raises(InputError, match="missing"):
        read_bag_file(p, "smiles")
    assert read_bag_file(p, "smiles", default_coef=1) == [[Term(1, "C"), Term(2, "O")]]


def test_strict_error_is_located(tmp_path: Path) -> None:
    p = _write(tmp_path, "{1}C\n{1}O\n{0}N\n")
    with pytest.raises(InputError) as info:
        read_bag_file(p, "smiles")
    assert str(info.value) == f"{p}:3: coefficient must be positive, got 0 (term '{{0}}N')"


def test_strict_chemistry_error_keeps_class(tmp_path: Path) -> None:
    p = _write(tmp_path, "{1}C\n{1}C1CC\n")
    with pytest.raises(ChemistryError) as info:
        read_bag_file(p, "smiles")
    assert str(info.value).startswith(f"{p}:2: ")
    assert info.value.term == "C1CC"
    assert read_bag_file(p, "smiles", validate_molecules=False)[1] == [Term(1, "C1CC")]


def test_formula_file_validates_formulas(tmp_path: Path) -> None:
    p = _write(tmp_path, "{1}H2O\n{1}Xx2\n")
    with pytest.raises(ChemistryError, match="unknown element symbol 'Xx'") as info:
        read_bag_file(p, "formula")
    assert str(info.value).startswith(f"{p}:2: ")


def test_non_strict_counts_every_skip(tmp_path: Path) -> None:
    lines = ["{1}C", "", "{x}C", "{1}C1CC", "{1}O", "{1}C..{1}O", "{0}N", "{2}N"]
    p = _write(tmp_path, "\n".join(lines) + "\n")
    res = read_bag_file(p, "smiles", strict=False)
    assert isinstance(res, BagFileResult)
    assert res.line_numbers == [1, 5, 8]
    assert res.bags == [[Term(1, "C")], [Term(1, "O")], [Term(2, "N")]]
    report = res.skipped
    assert isinstance(report, SkipReport)
    assert report.count == 5
    assert len(res) + report.count == len(lines)  # nothing silently lost
    assert [s.line for s in report.skipped] == [2, 3, 4, 6, 7]
    assert report.skipped[1].message == f"{p}:3: coefficient 'x' is not a positive integer (term '{{x}}C')"
    groups = report.by_reason()
    assert sum(len(v) for v in groups.values()) == 5
    assert groups["RDKit cannot parse or sanitise this SMILES"] == [4]
    assert "5 line(s) skipped" in report.summary()


def test_non_utf8_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.txt"
    p.write_bytes(b"{1}C\n{1}\xff\xfe\n")
    with pytest.raises(InputError, match="UTF-8") as info:
        read_bag_file(p, "smiles")
    assert str(info.value).startswith(f"{p}:2: ")
    res = read_bag_file(p, "smiles", strict=False)
    assert isinstance(res, BagFileResult) and res.skipped.count == 1


def test_missing_file_and_bad_repr(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        read_bag_file(tmp_path / "nope.txt", "smiles")
    with pytest.raises(InputError, match="unknown representation"):
        read_bag_file(_write(tmp_path, "{1}C\n"), "inchi")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("line", "terms", "repr"),
    [
        ("{2}CCO.{1}O", [Term(2, "CCO"), Term(1, "O")], "smiles"),
        ("OCC.O", [Term(1, "CCO"), Term(1, "O")], "smiles"),
        ("{3}OCC.O\n", [Term(3, "CCO"), Term(1, "O")], "smiles"),
        ("H2O.{2}Na+", [Term(1, "H2O"), Term(2, "Na+")], "formula"),
        ("OH2", [Term(1, "H2O")], "formula"),
        ("CC>>", [Term(1, "CC")], "smiles"),
        ("CC.CC>O>", [Term(1, "CC"), Term(1, "CC"), Term(1, "O")], "smiles"),
        ("OCC>[Na+]>CC=O", [Term(1, "CCO"), Term(1, "[Na+]")], "smiles"),
        ("[CH3:1][OH:2]>>[CH2:1]=[O:2]", [Term(1, "CO")], "smiles"),
        ("C[N+](C)(C)[O-]->O>>", [Term(1, "C[N+](C)(C)[O-]->O")], "smiles"),  # '->' is a dative bond, not an arrow
        ("CO", [Term(1, "CO")], "smiles"),  # both readings: a lone line reads as SMILES
    ],
)
def test_reaction_input(line: str, terms: list[Term], repr: str) -> None:
    assert parse_reaction_input(line) == ReactionInput(terms, repr)  # type: ignore[arg-type]


def test_reaction_input_forced_repr() -> None:
    assert parse_reaction_input("CCO", "formula") == ReactionInput([Term(1, "C2O")], "formula")
    with pytest.raises(InputError, match="reaction SMILES"):
        parse_reaction_input("CC>O>", "formula")  # a reaction SMILES is SMILES, whatever --repr says
    with pytest.raises(ChemistryError):
        parse_reaction_input("H2O", "smiles")
    with pytest.raises(InputError, match="neither SMILES"):
        parse_reaction_input("H2O.CCO")  # one term of each representation


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("", "empty line"),
        (">>CC", "no reactants"),
        ("CC>O", "exactly two '>'"),
        ("CC>O>C>C", "exactly two '>'"),
        ("{1}C>>", "coefficients"),
        ("CC..O>>", "empty molecule"),
        ("CC..O", "empty term"),
        ("CC>>CC 1-2", "whitespace"),
        ("{0}C", "positive"),
        ("C1CC>>", "RDKit cannot parse"),
        ("{1}Xx2", "RDKit cannot parse"),
    ],
)
def test_reaction_input_errors(line: str, reason: str) -> None:
    with pytest.raises(InputError) as info:
        parse_reaction_input(line, path="in.txt", lineno=4)
    assert reason in info.value.reason
    assert str(info.value).startswith("in.txt:4: ")
