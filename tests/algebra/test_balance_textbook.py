"""``gnnca balance`` on textbook equations: parentheses, complexes, hydrates and ionic charge forms.

Every expected answer was checked independently of this package: hand-typed element counts of each species,
the nullspace of the element matrix with sympy, scaled to the smallest positive integers
(and the classic ones against textbooks).
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gnn_chemalgebra.algebra.balance import balance_equation, parse_equation, species_composition
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.errors import BalanceError, InputError

pytestmark = pytest.mark.unit

TEXTBOOK = [
    ("Cu + HNO3 -> Cu(NO3)2 + NO + H2O", [3, 8, 3, 2, 4]),
    ("Ca3(PO4)2 + H2SO4 -> CaSO4 + H3PO4", [1, 3, 3, 2]),
    ("CuSO4*5H2O -> CuSO4 + H2O", [1, 1, 5]),
    ("CuSO4·5H2O -> CuSO4 + H2O", [1, 1, 5]),
    ("CuSO4.5H2O -> CuO + SO3 + H2O", [1, 1, 1, 5]),
    ("Na2CO3 · 10H2O -> Na2CO3 + H2O", [1, 1, 10]),
    ("KAl(SO4)2·12H2O -> KAl(SO4)2 + H2O", [1, 1, 12]),
    ("Ba(OH)2*8H2O + NH4Cl -> BaCl2 + NH3 + H2O", [1, 2, 1, 2, 10]),
    (
        "K4[Fe(CN)6] + KMnO4 + H2SO4 -> KHSO4 + Fe2(SO4)3 + MnSO4 + HNO3 + CO2 + H2O",
        [10, 122, 299, 162, 5, 122, 60, 60, 188],
    ),
    (
        "K4Fe(CN)6 + KMnO4 + H2SO4 -> KHSO4 + Fe2(SO4)3 + MnSO4 + HNO3 + CO2 + H2O",
        [10, 122, 299, 162, 5, 122, 60, 60, 188],
    ),
    ("Ca(OH)2 + H3PO4 -> Ca3(PO4)2 + H2O", [3, 2, 1, 6]),
    ("Al2(SO4)3 + Ca(OH)2 -> Al(OH)3 + CaSO4", [1, 3, 2, 3]),
    ("(NH4)2Cr2O7 -> Cr2O3 + N2 + H2O", [1, 1, 1, 4]),
    ("Pb(NO3)2 -> PbO + NO2 + O2", [2, 2, 4, 1]),
    ("Mg(OH)2 + HCl -> MgCl2 + H2O", [1, 2, 1, 2]),
    ("Ca3(PO4)2 + SiO2 + C -> CaSiO3 + P4 + CO", [2, 6, 10, 6, 1, 10]),
    ("Fe4[Fe(CN)6]3 + NaOH -> Fe(OH)3 + Na4[Fe(CN)6]", [1, 12, 4, 3]),
    # ionic equations with every charge form
    ("Fe3+ + I- -> Fe2+ + I2", [2, 2, 2, 1]),
    ("MnO4^- + Fe^2+ + H^+ -> Mn^2+ + Fe^3+ + H2O", [1, 5, 8, 1, 5, 4]),
    ("Cr2O7{2-} + Fe{2+} + H{+} -> Cr{3+} + Fe{3+} + H2O", [1, 6, 14, 2, 6, 7]),
    ("Cr2O7-2 + Fe+2 + H+ -> Cr+3 + Fe+3 + H2O", [1, 6, 14, 2, 6, 7]),
    ("Cu(OH)2 + NH3 -> [Cu(NH3)4]2+ + OH-", [1, 4, 1, 2]),
    ("SO₄²⁻ + Ba²⁺ -> BaSO₄", [1, 1, 1]),
    ("Fe3+ + e- -> Fe2+", [1, 1, 1]),
]


@pytest.mark.parametrize(("equation", "coefs"), TEXTBOOK)
def test_textbook_equation(equation: str, coefs: list[int]) -> None:
    res = balance_equation(equation)
    assert res.coefficients == coefs
    total: Counter = Counter()
    for mol, k, sign in zip(
        res.reactants + res.products, coefs, [-1] * len(res.reactants) + [1] * len(res.products), strict=True
    ):
        for el, n in species_composition(mol, "formula").items():
            total[el] += sign * k * n
    assert not +total and not -total


def test_hydrate_dot_is_not_a_species_separator_for_formulas() -> None:
    eq = parse_equation("CuSO4.5H2O -> CuSO4 + H2O")
    assert eq.reactants == ["CuSO4.5H2O"]
    eq = parse_equation("CuSO4 · 5H2O -> CuSO4 + 5 H2O")
    assert eq.reactants == ["CuSO4·5H2O"] and eq.given == [None, None, 5]
    assert parse_equation("CuSO4 * 5 H2O -> CuSO4 + H2O").reactants == ["CuSO4*5H2O"]


def test_monatomic_charge_reads_as_textbook() -> None:
    assert species_composition("Fe3+", "formula") == Counter({"Fe": 1, "charge": 3})
    assert species_composition("NH4+", "formula") == Counter({"N": 1, "H": 4, "charge": 1})
    assert species_composition("e^-", "formula") == Counter({"charge": -1})


def test_state_symbols_are_kept_and_ignored() -> None:
    res = balance_equation("CaCO3(s) + HCl(aq) -> CaCl2(aq) + H2O(l) + CO2(g)")
    assert res.coefficients == [1, 2, 1, 1, 1] and res.reactants == ["CaCO3(s)", "HCl(aq)"]
    assert balance_equation("Zn(s) + Cu2+(aq) -> Zn2+(aq) + Cu(s)").coefficients == [1, 1, 1, 1]
    assert species_composition("Fe(OH)3(s)", "formula") == Counter({"Fe": 1, "O": 3, "H": 3})
    with pytest.raises(InputError):  # a state symbol alone is not a species
        balance_equation("(aq) + H2 -> H2")


def test_unbalanced_hydrate_is_still_impossible() -> None:
    with pytest.raises(BalanceError, match="impossible"):
        balance_equation("CuSO4*5H2O -> CuSO4")


def test_bad_group_is_input_error() -> None:
    with pytest.raises(InputError, match="unclosed"):
        balance_equation("Ca(OH + HCl -> CaCl2 + H2O")


runner = CliRunner()


def test_cli_balance_textbook_regression() -> None:
    """Groups in parentheses balance (a regression: this once ended in "unexpected character '('")."""
    out = runner.invoke(app, ["balance", "Cu + HNO3 -> Cu(NO3)2 + NO + H2O"])
    assert out.exit_code == 0, out.output
    assert out.stdout.strip() == "3 Cu + 8 HNO3 -> 3 Cu(NO3)2 + 2 NO + 4 H2O"


def test_cli_balance_ionic_charge_forms() -> None:
    out = runner.invoke(app, ["balance", "Fe3+ + Sn2+ -> Fe2+ + Sn4+"])
    assert out.exit_code == 0, out.output
    assert out.stdout.strip() == "2 Fe3+ + Sn2+ -> 2 Fe2+ + Sn4+"


def test_cli_balance_bad_formula_is_one_line() -> None:
    out = runner.invoke(app, ["balance", "Ca(OH]2 + HCl -> CaCl2 + H2O"])
    assert out.exit_code == 2
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gnnca: error:") and "closed by ']'" in lines[0]


_PIECES = st.sampled_from(
    ["Cu", "(NO3)2", "[Fe(CN)6]", "H2O", "*5H2O", "·", ".", "^2-", "{3+}", "+", "-", "3+", "e-", " + ", " -> "]
    + ["2 ", "(", ")", "]", "Fe", "SO4", "K4", "Ca", "O2", "Cl", "Xx", "=", "→", " "]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=14).map("".join))
def test_any_equation_balances_or_is_a_project_error(text: str) -> None:
    """Arbitrary textbook-ish text: a result, an InputError or a BalanceError, never another exception."""
    try:
        res = balance_equation(text)
    except (InputError, BalanceError):
        return
    assert res.coefficients is None or all(k > 0 for k in res.coefficients)
