"""Textbook formula notation: groups, hydrates and charge forms, with the benchmark's strings read as before."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gnn_chemalgebra.chem.formula import ELEMENTS, parse_formula, write_formula
from gnn_chemalgebra.chem.molecule import canonical, composition, detect_repr
from gnn_chemalgebra.errors import ChemistryError, InputError

pytestmark = pytest.mark.unit

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize(
    ("text", "notation", "expected"),
    [
        ("Ca3(PO4)2", "extended", {"Ca": 3, "P": 2, "O": 8}),
        ("K4[Fe(CN)6]", "extended", {"K": 4, "Fe": 1, "C": 6, "N": 6}),
        ("K4Fe(CN)6", "extended", {"K": 4, "Fe": 1, "C": 6, "N": 6}),
        ("Cu(NO3)2", "extended", {"Cu": 1, "N": 2, "O": 6}),
        ("Ca(OH)2", "extended", {"Ca": 1, "O": 2, "H": 2}),
        ("(NH4)2SO4", "extended", {"N": 2, "H": 8, "S": 1, "O": 4}),
        ("Fe4[Fe(CN)6]3", "extended", {"Fe": 7, "C": 18, "N": 18}),
        ("[Cu(NH3)4]SO4", "extended", {"Cu": 1, "N": 4, "H": 12, "S": 1, "O": 4}),
        ("CuSO4*5H2O", "extended", {"Cu": 1, "S": 1, "O": 9, "H": 10}),
        ("CuSO4·5H2O", "extended", {"Cu": 1, "S": 1, "O": 9, "H": 10}),
        ("CuSO4.5H2O", "textbook", {"Cu": 1, "S": 1, "O": 9, "H": 10}),
        ("KAl(SO4)2·12H2O", "extended", {"K": 1, "Al": 1, "S": 2, "O": 20, "H": 24}),
        ("CaSO4·H2O", "extended", {"Ca": 1, "S": 1, "O": 5, "H": 2}),
        ("Fe+3", "extended", {"Fe": 1, "charge": 3}),
        ("Fe3+", "textbook", {"Fe": 1, "charge": 3}),
        ("S2-", "textbook", {"S": 1, "charge": -2}),
        ("[Fe(CN)6]4-", "textbook", {"Fe": 1, "C": 6, "N": 6, "charge": -4}),
        ("NH4+", "textbook", {"N": 1, "H": 4, "charge": 1}),
        ("H3O+", "textbook", {"H": 3, "O": 1, "charge": 1}),
        ("SO4^2-", "extended", {"S": 1, "O": 4, "charge": -2}),
        ("SO4^-2", "extended", {"S": 1, "O": 4, "charge": -2}),
        ("SO4{2-}", "extended", {"S": 1, "O": 4, "charge": -2}),
        ("SO4{-2}", "extended", {"S": 1, "O": 4, "charge": -2}),
        ("SO4-2", "extended", {"S": 1, "O": 4, "charge": -2}),
        ("Na^+", "extended", {"Na": 1, "charge": 1}),
        ("Cl{-}", "extended", {"Cl": 1, "charge": -1}),
        ("SO₄²⁻", "extended", {"S": 1, "O": 4, "charge": -2}),
        ("Fe³⁺", "extended", {"Fe": 1, "charge": 3}),
        ("MnO4−", "extended", {"Mn": 1, "O": 4, "charge": -1}),  # Unicode minus
    ],
)
def test_textbook_notation(text: str, notation: str, expected: dict[str, int]) -> None:
    assert parse_formula(text, notation=notation) == Counter(expected)  # type: ignore[arg-type]
    assert parse_formula(text, notation="textbook") == Counter(expected)


@pytest.mark.parametrize(
    ("text", "rdkit_reading"),
    [
        ("N3-", {"N": 3, "charge": -1}),  # azide in USPTO
        ("O2-", {"O": 2, "charge": -1}),  # superoxide
        ("O2-2", {"O": 2, "charge": -2}),  # peroxide
        ("C2-2", {"C": 2, "charge": -2}),  # acetylide
        ("Fe3+", {"Fe": 3, "charge": 1}),
    ],
)
def test_benchmark_charge_suffix_keeps_calcmolformula_meaning(text: str, rdkit_reading: dict[str, int]) -> None:
    """CalcMolFormula writes azide as N3-: the predict/benchmark notations keep that reading."""
    assert parse_formula(text) == Counter(rdkit_reading)
    assert parse_formula(text, notation="extended") == Counter(rdkit_reading)
    assert canonical(text, "formula") == write_formula(rdkit_reading)


def test_textbook_monatomic_charge_differs_only_where_documented() -> None:
    assert parse_formula("N3-", notation="textbook") == Counter({"N": 1, "charge": -3})  # nitride
    assert parse_formula("N3^-", notation="textbook") == Counter({"N": 3, "charge": -1})  # azide, written explicitly


@pytest.mark.parametrize(
    "text",
    ["Ca(OH)2", "K4[Fe(CN)6]", "CuSO4*5H2O", "SO4^2-", "Fe(", "CuSO4.5H2O", "Fe{3+}", "SO₄²⁻"],
)
def test_default_notation_is_calcmolformula_only(text: str) -> None:
    """The evaluator reads models' outputs with the default: textbook syntax stays invalid there."""
    with pytest.raises(ChemistryError):
        parse_formula(text)


@pytest.mark.parametrize(
    ("text", "notation", "reason"),
    [
        ("()", "extended", "empty group"),
        ("Ca(OH", "extended", "unclosed '('"),
        ("Ca(OH]2", "extended", "closed by ']'"),
        ("CaOH)2", "extended", "unmatched ')'"),
        ("Ca(OH)0", "extended", "zero count"),
        ("CuSO4*", "extended", "dummy atom"),
        ("*H2O", "extended", "dummy atom"),
        ("CuSO4**5H2O", "extended", "dummy atom"),
        ("CuSO4*0H2O", "extended", "zero hydrate multiplier"),
        ("CuSO4*.H2O", "textbook", "needs a formula after it"),
        ("CuSO4.5H2O", "extended", "unexpected character '.'"),  # '.' separates molecules in predict
        ("[13C]H4", "extended", "isotope"),
        ("S²O", "extended", "unexpected character '²'"),
        ("SO4^", "extended", "unexpected character '^'"),
        ("SO4^0-", "textbook", "charge of zero"),
        ("(" * 25 + "C" + ")" * 25, "textbook", "nested"),
        ("Ca(Xx)2", "textbook", "unknown element symbol 'Xx'"),
        ("2H2O", "textbook", "unexpected character '2'"),
        ("5H2O", "extended", "write a hydrate as CuSO4*5H2O"),  # what CuSO4.5H2O leaves after the '.' in predict
    ],
)
def test_bad_textbook_formula_is_one_clear_error(text: str, notation: str, reason: str) -> None:
    with pytest.raises(ChemistryError) as info:
        parse_formula(text, notation=notation)  # type: ignore[arg-type]
    assert reason in info.value.reason


def test_unknown_notation_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="notation"):
        parse_formula("H2O", notation="iupac")  # type: ignore[arg-type]


def test_predict_input_formulas_accept_textbook_notation() -> None:
    """``gnnca predict``'s formula input goes through molecule.canonical/composition (extended notation)."""
    assert canonical("Ca(OH)2", "formula") == "H2CaO2"
    assert canonical("CuSO4·5H2O", "formula") == "H10CuO9S"
    assert canonical("SO4^2-", "formula") == "O4S-2"
    assert composition("K4[Fe(CN)6]", "formula") == Counter({"K": 4, "Fe": 1, "C": 6, "N": 6})
    assert detect_repr(["Ca(OH)2", "H2O"]) == "formula"
    assert detect_repr(["CC(C)C"]) == "smiles"  # a SMILES that also reads as a non-canonical formula
    with pytest.raises(InputError):
        canonical("CuSO4.5H2O", "formula")


# --------------------------------------------------------------------------- property tests
# A random textbook formula is built as a tree; its composition is computed from the tree, independently of
# the parser, then the rendered text must parse to it and survive parse -> canonical formula -> parse.
_SYMBOLS = sorted(ELEMENTS - {"D", "T"})


@st.composite
def _unit(draw: st.DrawFn, depth: int = 0) -> tuple[str, Counter]:
    count = draw(st.integers(1, 12))
    suffix = str(count) if count > 1 else ""
    if depth < 3 and draw(st.booleans()):
        inner = draw(st.lists(_unit(depth + 1), min_size=1, max_size=3))
        opener, closer = draw(st.sampled_from([("(", ")"), ("[", "]")]))
        text = opener + "".join(t for t, _ in inner) + closer + suffix
        comp: Counter = Counter()
        for _, c in inner:
            comp.update(c)
        return text, Counter({k: v * count for k, v in comp.items()})
    sym = draw(st.sampled_from(_SYMBOLS))
    return sym + suffix, Counter({sym: count})


@st.composite
def _component(draw: st.DrawFn) -> tuple[str, Counter]:
    units = draw(st.lists(_unit(), min_size=1, max_size=4))
    comp: Counter = Counter()
    for _, c in units:
        comp.update(c)
    return "".join(t for t, _ in units), comp


@st.composite
def textbook_formulas(draw: st.DrawFn) -> tuple[str, Counter]:
    text, comp = draw(_component())
    for _ in range(draw(st.integers(0, 2))):
        times = draw(st.integers(1, 12))
        part, c = draw(_component())
        dot = draw(st.sampled_from(["*", "·", "•"]))
        text += dot + (str(times) if times > 1 else "") + part
        comp.update({k: v * times for k, v in c.items()})
    charge = draw(st.integers(-4, 4))
    if charge:
        sign, mag = ("+" if charge > 0 else "-"), abs(charge)
        text += draw(st.sampled_from([f"^{mag}{sign}", f"{{{mag}{sign}}}", f"^{sign}{mag}", f"{sign}{mag}"]))
        comp["charge"] = charge
    return text, comp


@FUZZ
@given(textbook_formulas())
def test_textbook_round_trip(case: tuple[str, Counter]) -> None:
    text, comp = case
    parsed = parse_formula(text, notation="extended")
    assert parsed == comp
    assert parse_formula(text, notation="textbook") == comp
    canon = write_formula(parsed)
    assert parse_formula(canon) == comp  # the canonical formula is plain CalcMolFormula notation
    assert canonical(text, "formula") == canon
    assert canonical(canon, "formula") == canon


_TEXTBOOK_ALPHABET = st.sampled_from(
    list("()[]{}^*·.0123456789+-−²⁻⁺₄ CHNOSKFe") + ["Cl", "Ca", "Cu", "Xx", "SO4", "(OH)2", "5H2O"]
)


@FUZZ
@given(st.one_of(st.text(max_size=30), st.lists(_TEXTBOOK_ALPHABET, max_size=25).map("".join)))
def test_any_text_parses_or_is_a_chemistry_error(text: str) -> None:
    for notation in ("rdkit", "extended", "textbook"):
        try:
            comp = parse_formula(text, notation=notation)  # type: ignore[arg-type]
        except ChemistryError:
            continue
        assert parse_formula(write_formula(comp)) == comp


@FUZZ
@given(st.lists(_TEXTBOOK_ALPHABET, max_size=25).map("".join))
def test_extended_agrees_with_default_wherever_the_default_reads(text: str) -> None:
    """Benchmark strings (everything the default notation reads) read identically in the predict notation."""
    try:
        comp = parse_formula(text)
    except ChemistryError:
        return
    assert parse_formula(text, notation="extended") == comp
