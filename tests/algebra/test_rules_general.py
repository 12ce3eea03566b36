"""The general-chemistry rules: each fires on its reaction, writes the balanced line a chemist writes (ions as
the input writes them), and stays silent where the line is not its reaction or is ambiguous."""

from __future__ import annotations

from collections import Counter

import pytest

from gnn_chemalgebra.algebra.rules import apply_rules
from gnn_chemalgebra.chem.bag import parse_bag
from gnn_chemalgebra.chem.molecule import canonical, composition

pytestmark = pytest.mark.unit


def _line(text: str, repr: str = "smiles") -> tuple[str, Counter] | None:
    got = apply_rules(parse_bag(text, default_coef=1), repr)  # type: ignore[arg-type]
    if got is None:
        return None
    return got.rule, Counter({canonical(t.mol, repr): t.coef for t in got.terms})  # type: ignore[arg-type]


def _bag(text: str, repr: str = "smiles") -> Counter:
    return Counter({canonical(t.mol, repr): t.coef for t in parse_bag(text)})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("line", "rule", "expected"),
    [
        ("O=[N+]([O-])O.[K+].[OH-]", "neutralisation", "{1}[K+].{1}[O-][N+](=O)[O-].{1}O"),
        ("O=P(O)(O)O.{3}[Na+].{3}[OH-]", "neutralisation", "{3}[Na+].{1}[O-]P(=O)([O-])[O-].{3}O"),
        ("Cl.O[Na]", "neutralisation", "{1}Cl[Na].{1}O"),
        ("CCN.Br", "neutralisation", "{1}CC[NH3+].{1}[Br-]"),
        ("CC(=O)O.[Li+].[OH-]", "neutralisation", "{1}CC(=O)[O-].{1}[Li+].{1}O"),
        ("{2}Br.O=C(O[Na])O[Na]", "carbonate_acid", "{2}Br[Na].{1}O=C=O.{1}O"),
        ("CCC.{5}O=O", "combustion", "{3}O=C=O.{4}O"),
        ("{2}CSC.{9}O=O", "combustion", "{4}O=C=O.{6}O.{2}O=S=O"),
        ("{4}CN.{9}O=O", "combustion", "{4}O=C=O.{10}O.{2}N#N"),
        ("[Zn].{2}Br", "metal_acid", "{1}[Zn+2].{2}[Br-].{1}[H][H]"),
        ("{2}[Al].{6}[H+]", "metal_acid", "{2}[Al+3].{3}[H][H]"),
        ("{2}[K].{2}O", "metal_water", "{2}[K+].{2}[OH-].{1}[H][H]"),
        ("[Ba+2].{2}[Cl-].{2}[Na+].[O-]S(=O)(=O)[O-]", "precipitation", "{1}O=S1(=O)O[Ba]O1.{2}[Cl-].{2}[Na+]"),
        ("[Fe].[Cu+2].[O-]S(=O)(=O)[O-]", "displacement", "{1}[Fe+2].{1}[Cu].{1}[O-]S(=O)(=O)[O-]"),
        ("ClCl.{2}[I-].{2}[K+]", "displacement", "{1}II.{2}[Cl-].{2}[K+]"),
        ("O=C1O[Mg]O1", "carbonate_decomposition", "{1}[Mg]=O.{1}O=C=O"),
        ("{2}[Na+].{2}OC([O-])=O", "carbonate_decomposition", "{2}[Na+].{1}[O-]C([O-])=O.{1}O.{1}O=C=O"),
        ("{2}[Ca].O=O", "combination", "{2}[Ca]=O"),
        ("{2}[K].BrBr", "combination", "{2}[K+].{2}[Br-]"),
        ("[H][H].ClCl", "combination", "{2}Cl"),
        ("N#N.{3}[H][H]", "combination", "{2}N"),
        ("{2}[Na+].{2}[O-]Cl(=O)=O", "thermal_decomposition", "{2}[Na+].{2}[Cl-].{3}O=O"),
        ("{2}O=Cl(=O)O[K]", "thermal_decomposition", "{2}Cl[K].{3}O=O"),
        ("{2}[Ag]O[Ag]", "thermal_decomposition", "{4}[Ag].{1}O=O"),
        ("{2}OO", "thermal_decomposition", "{2}O.{1}O=O"),
        ("{2}[O-][Mn](=O)(=O)=O.{10}[Fe+2].{16}[H+]", "redox", "{2}[Mn+2].{10}[Fe+3].{8}O"),
        ("{2}[Fe+3].{2}[I-]", "redox", "{2}[Fe+2].{1}II"),
        ("OO.{2}[I-].{2}[H+]", "redox", "{1}II.{2}O"),
        ("{2}[K+].{2}[O-][Mn](=O)(=O)=O.{5}[Sn+2].{16}[H+]", "redox", "{2}[K+].{2}[Mn+2].{5}[Sn+4].{8}O"),
    ],
)
def test_rule_writes_the_line(line: str, rule: str, expected: str) -> None:
    got = _line(line)
    assert got is not None, line
    assert got[0] == rule
    assert got[1] == _bag(expected)


@pytest.mark.parametrize(
    ("line", "rule", "expected"),
    [
        ("C3H8.{5}O2", "combustion", "{3}CO2.{4}H2O"),
        ("{2}HCl.Ca+2.{2}HO-", "neutralisation", "{1}Ca+2.{2}Cl-.{2}H2O"),
        ("ClH.HNaO", "neutralisation", "{1}ClNa.{1}H2O"),
        ("Zn.{2}ClH", "metal_acid", "{1}Zn+2.{2}Cl-.{1}H2"),
        ("Ag+.Br-.K+.NO3-", "precipitation", "{1}AgBr.{1}K+.{1}NO3-"),
        ("{2}Mg.O2", "combination", "{2}MgO"),
        ("{2}KClO3", "thermal_decomposition", "{2}ClK.{3}O2"),
        ("MnO4-.{5}Fe+2.{8}H+", "redox", "{1}Mn+2.{5}Fe+3.{4}H2O"),
        ("I2.{2}O3S2-2", "redox", "{2}I-.{1}O6S4-2"),
    ],
)
def test_rule_reads_formulas(line: str, rule: str, expected: str) -> None:
    got = _line(line, "formula")
    assert got is not None, line
    assert got[0] == rule
    assert got[1] == _bag(expected, "formula")


@pytest.mark.parametrize(
    "line",
    [
        "[Cu].{2}Cl",  # copper is below hydrogen: no hydrogen from a non-oxidising acid
        "[Mg].{2}O=[N+]([O-])O",  # nitric acid oxidises: not the metal + acid rule
        "[Mg].{2}O",  # magnesium does not react with cold water
        "[Cu].[Zn+2]",  # zinc is more active than copper
        "BrBr.{2}[Cl-]",  # bromine does not displace chloride
        "[Na+].[Cl-].[K+].[O-][N+](=O)[O-]",  # every salt soluble: no precipitate
        "Cl.[Na+].[OH-].CCO",  # a molecule no rule names stands on the line
        "CC(=O)O.NCc1ccccc1",  # acid + amine: a salt cold or an amide hot, left to the model
        "{2}[Na+].[O-]C([O-])=O",  # sodium carbonate does not decompose
        "[Ca+2].[O-]C([O-])=O",  # precipitation or (heated) decomposition: ambiguous
        "CC.CCC.{9}O=O",  # two fuels: their amounts do not fix one balancing
        "C2H4O2.HNaO",  # a formula with carbon names no acid
        "{4}[Fe].{3}O=O",  # iron has two common ions: FeO or Fe2O3
        "{4}[Na].O=O",  # sodium burns to its peroxide, not the oxide a course writes first
        "[Na+].[O-][N+](=O)[O-]",  # a nitrate: its decomposition depends on the metal
        "[O-][Mn](=O)(=O)=O.{5}[Fe+2]",  # permanganate without acid: not the Mn(II) reaction
        "{2}[Fe+3].{2}[Br-]",  # iron(III) does not oxidise bromide
        "[O-][Mn](=O)(=O)=O.{5}[Fe+2].{8}[H+].{5}[Cl-]",  # chloride could be oxidised too: two pairs
        "{2}[O-][Mn](=O)(=O)=O.{5}OO.{6}[H+]",  # peroxide's own decomposition balances in too: no one equation
        "II.{2}[Br-]",  # iodine does not oxidise bromide (and halogens with halides are displacement's)
    ],
)
def test_no_rule_fires(line: str) -> None:
    repr = "formula" if line.startswith("C2H4O2") else "smiles"
    assert _line(line, repr) is None


def test_amounts_choose_the_extent() -> None:
    """Amounts written: the limiting reactant is consumed, the rest written back; the line balances the source."""
    got = apply_rules(parse_bag("{3}[Na].{2}O"), "smiles")
    assert got is not None
    assert {t.mol: t.coef for t in got.terms} == {"[Na]": 1, "[Na+]": 2, "[OH-]": 2, "[H][H]": 1}
    src = Counter()
    for t in parse_bag("{3}[Na].{2}O"):
        src.update({k: v * t.coef for k, v in composition(t.mol, "smiles").items()})
    out = Counter()
    for t in got.terms:
        out.update({k: v * t.coef for k, v in composition(t.mol, "smiles").items()})
    assert +src == +out and -src == -out


def test_too_little_for_one_reaction() -> None:
    """Amounts that hold less than one reaction (and are not all 1): no rule line."""
    assert apply_rules(parse_bag("{2}[Mg].{1}Cl"), "smiles") is None


def test_reaction_smiles_writes_the_reaction() -> None:
    """A reaction SMILES states no amounts: the reaction at the smallest integers, reagents as written, the
    given products made; a rule whose products differ, or that consumes a reagent, does not fire."""
    terms = parse_bag("[Mg].Cl", default_coef=1)
    got = apply_rules(terms, "smiles", given=["[Mg+2]"], reagents=[])
    assert got is not None and _bag(got.line) == _bag("{1}[Mg+2].{2}[Cl-].{1}[H][H]")
    assert apply_rules(terms, "smiles", given=["Cl[Mg]Cl"], reagents=[]) is None
    assert apply_rules(terms, "smiles", given=["[Mg+2]"], reagents=["Cl"]) is None
