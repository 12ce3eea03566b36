"""The textbook reactions: valid molecules, balanced outcomes (also by the equation balancer), enough classes,
a stratified split whose parts share no reaction, and the three input styles of each row."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from gnn_chemalgebra.algebra.balance import balance
from gnn_chemalgebra.chem.bag import parse_bag
from gnn_chemalgebra.chem.bagfile import parse_reaction_input
from gnn_chemalgebra.chem.molecule import bag_composition
from gnn_chemalgebra.chem.smiles import try_canonical
from gnn_chemalgebra.data.textbook import COLUMNS, DEFAULT_DIR, STYLES, read_part, read_textbook
from gnn_chemalgebra.errors import InputError

pytestmark = pytest.mark.unit

ROWS = read_textbook()


def test_size_classes_and_areas() -> None:
    assert len(ROWS) >= 150
    classes = Counter(r.cls for r in ROWS)
    assert len(classes) >= 40
    areas = Counter(r.area for r in ROWS)
    assert areas["organic"] >= 150 and areas["general"] >= 40


def test_split_is_stratified_and_disjoint() -> None:
    dev, held = read_part("dev"), read_part("held_out")
    assert 0.25 <= len(held) / len(ROWS) <= 0.40
    assert not {r.id for r in dev} & {r.id for r in held}
    key = lambda r: frozenset((try_canonical(t.mol), t.coef) for t in r.terms())  # noqa: E731
    assert not {key(r) for r in dev} & {key(r) for r in held}
    for cls, n in Counter(r.cls for r in ROWS).items():
        n_held = sum(r.cls == cls for r in held)
        assert n_held == max(1, round(n / 3)), cls
        assert n - n_held >= 1, cls


def test_every_molecule_is_valid_smiles() -> None:
    for r in ROWS:
        for line in (r.reactants, r.outcome, r.main):
            for t in parse_bag(line, default_coef=1):
                assert try_canonical(t.mol) is not None, (r.id, t.mol)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_outcome_balances_by_the_algebra(row) -> None:  # noqa: ANN001
    """Atoms and charge conserved; where the equation balancer finds one balancing, the written coefficients are
    that balancing (a catalyst on both sides is left out of the equation, as a chemist writes it over the arrow)."""
    assert bag_composition(row.reactants, "smiles") == bag_composition(row.outcome, "smiles")
    kept = {try_canonical(t.mol) for t in row.spectators()}
    left = [t for t in row.terms() if try_canonical(t.mol) not in kept]
    right = [t for t in row.outcome_terms() if try_canonical(t.mol) not in kept]
    res = balance([t.mol for t in left], [t.mol for t in right], "smiles")
    if res.coefficients is not None:
        ratios = {Fraction(t.coef, k) for t, k in zip(left + right, res.coefficients, strict=True)}
        assert len(ratios) == 1, (row.id, res.coefficients)


@pytest.mark.parametrize("style", STYLES)
def test_each_style_reads_and_its_expected_line_balances(style: str) -> None:
    """The predictor's parser reads every source line; the expected line has the atoms the line supplies
    (a reaction SMILES: its reagents plus the balanced reaction of its reactants)."""
    repr = "formula" if style == "formula" else "smiles"
    for r in ROWS:
        src, want = r.source(style), r.expected(style)
        inp = parse_reaction_input(src, repr)
        assert inp.repr == repr
        if style != "reaction":
            assert bag_composition(src, repr) == bag_composition(want, repr), r.id
        else:
            assert src.endswith(">" + r.main)
            assert len(parse_bag(want)) >= len(parse_bag(r.main, default_coef=1)), r.id


@pytest.mark.parametrize(
    ("reactants", "style", "source", "expected"),
    [
        ("{2}CCCCCCCC.{25}O=O", "formula", "{2}C8H18.{25}O2", "{16}CO2.{18}H2O"),  # written coefficients kept
        ("CC(=O)O.OCC", "formula", "C2H4O2.C2H6O", "{1}C4H8O2.{1}H2O"),  # none added
        ("C=Cc1ccccc1.[H][H].[Pd]", "reaction", "C=Cc1ccccc1.[H][H]>[Pd]>CCc1ccccc1", "{1}[Pd].{1}CCc1ccccc1"),
        # a reaction SMILES carries no amounts: its reaction at the smallest coefficients, the reagent as named
        ("{2}Cl.[Ca+2].{2}[OH-]", "reaction", "Cl.[OH-]>[Ca+2]>[Cl-]", "{1}[Ca+2].{1}[Cl-].{1}O"),
    ],
)
def test_style_lines(reactants: str, style: str, source: str, expected: str) -> None:
    row = next(r for r in ROWS if r.reactants == reactants)
    assert (row.source(style), row.expected(style)) == (source, expected)


def _write(folder: Path, rows: list[str]) -> None:
    folder.mkdir(exist_ok=True)
    (folder / "dev.tsv").write_text("\t".join(COLUMNS) + "\n" + "".join(r + "\n" for r in rows), encoding="utf-8")


GOOD = {"id": "a1", "class": "SN2", "area": "organic", "reactants": "CCBr.[Na+].[OH-]"}
GOOD |= {"outcome": "{1}CCO.{1}[Na+].{1}[Br-]", "main": "CCO", "note": ""}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"outcome": "{1}CCO.{1}[Na+]"}, "does not balance"),
        ({"main": "CCX"}, "RDKit cannot read"),
        ({"main": "[Na+]"}, "main product"),
        ({"area": "physics"}, "area must be"),
        ({"outcome": "CCO.[Na+].[Br-]"}, "missing '{k}'"),
        ({"id": "a 1"}, "letters, digits"),
    ],
)
def test_a_bad_row_is_one_located_error(tmp_path: Path, change: dict[str, str], message: str) -> None:
    _write(tmp_path, ["\t".join((GOOD | change)[c] for c in COLUMNS)])
    with pytest.raises(InputError, match=message) as err:
        read_part("dev", tmp_path)
    assert str(err.value).startswith(f"{tmp_path / 'dev.tsv'}:2:")


def test_a_short_row_is_one_located_error(tmp_path: Path) -> None:
    _write(tmp_path, ["a1\tSN2\torganic\tCCBr.[Na+].[OH-]"])
    with pytest.raises(InputError, match="fields, expected 7"):
        read_part("dev", tmp_path)


def test_a_repeated_reaction_is_refused(tmp_path: Path) -> None:
    rows = ["\t".join((GOOD | {"id": name})[c] for c in COLUMNS) for name in ("a1", "a2")]
    _write(tmp_path, rows)
    (tmp_path / "held_out.tsv").write_text("\t".join(COLUMNS) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="repeats row a1"):
        read_textbook("all", tmp_path)


def test_bundled_folder_is_the_repository_data() -> None:
    assert (DEFAULT_DIR / "held_out.tsv").is_file() and (DEFAULT_DIR / "README.md").is_file()
