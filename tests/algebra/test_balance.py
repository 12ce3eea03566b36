"""Balancing: textbook equations with known answers, impossible and underdetermined cases, parsing."""

from __future__ import annotations

import pytest

from gnn_chemalgebra.algebra.balance import balance, balance_equation, parse_equation, species_composition
from gnn_chemalgebra.algebra.matrix import element_matrix, mat_vec
from gnn_chemalgebra.errors import BalanceError, InputError

# (equation, coefficients in written order). Formula parser has no parentheses: Cu(NO3)2 = CuN2O6.
TEXTBOOK: list[tuple[str, list[int]]] = [
    ("H2 + O2 -> H2O", [2, 1, 2]),
    ("KMnO4 + HCl -> KCl + MnCl2 + H2O + Cl2", [2, 16, 2, 2, 8, 5]),
    ("Cu + HNO3 -> CuN2O6 + NO + H2O", [3, 8, 3, 2, 4]),  # dilute nitric acid
    ("Cu + HNO3 -> CuN2O6 + NO2 + H2O", [1, 4, 1, 2, 2]),  # concentrated
    ("C8H18 + O2 -> CO2 + H2O", [2, 25, 16, 18]),
    ("CH4 + O2 -> CO2 + H2O", [1, 2, 1, 2]),
    ("C3H8 + O2 = CO2 + H2O", [1, 5, 3, 4]),
    ("C6H12O6 + O2 -> CO2 + H2O", [1, 6, 6, 6]),
    ("Fe2O3 + CO -> Fe + CO2", [1, 3, 2, 3]),
    ("Al + O2 -> Al2O3", [4, 3, 2]),
    ("N2 + H2 >> NH3", [1, 3, 2]),
    ("MnO4- + Fe+2 + H+ -> Mn+2 + Fe+3 + H2O", [1, 5, 8, 1, 5, 4]),
    ("Cr2O7-2 + Fe+2 + H+ -> Cr+3 + Fe+3 + H2O", [1, 6, 14, 2, 6, 7]),
    ("K2Cr2O7 + HCl -> KCl + CrCl3 + Cl2 + H2O", [1, 14, 2, 2, 3, 7]),
    ("Zn + HCl -> ZnCl2 + H2", [1, 2, 1, 1]),
    ("NaOH + H2SO4 -> Na2SO4 + H2O", [2, 1, 1, 2]),
    ("Ca3P2O8 + SiO2 + C -> CaSiO3 + P4 + CO", [2, 6, 10, 6, 1, 10]),
    ("FeS2 + O2 -> Fe2O3 + SO2", [4, 11, 2, 8]),
    ("Cu + NO3- + H+ -> Cu+2 + NO + H2O", [3, 2, 8, 3, 2, 4]),
    ("NH3 + O2 -> NO + H2O", [4, 5, 4, 6]),
    ("PbN2O6 -> PbO + NO2 + O2", [2, 2, 4, 1]),
    ("As2S3 + HNO3 + H2O -> H3AsO4 + H2SO4 + NO", [3, 28, 4, 6, 9, 28]),
    ("P4 + NaOH + H2O -> PH3 + NaH2PO2", [1, 3, 3, 1, 3]),
    ("MnO4- + H+ + e- -> Mn+2 + H2O", [1, 8, 5, 1, 4]),  # half reaction with electrons
    ("C2H6 + O2 → CO2 + H2O", [2, 7, 4, 6]),
    ("KClO3 -> KCl + O2", [2, 2, 3]),
]

SMILES_TEXTBOOK: list[tuple[str, list[int]]] = [
    ("CCO + O=O >> O=C=O + O", [1, 3, 2, 3]),
    ("CC=C.[H][H]>>CCC", [1, 1, 1]),
    ("[Cu] + [H+] + O=[N+]([O-])[O-] -> [Cu+2] + [N]=O + O", [3, 8, 2, 3, 2, 4]),
    ("c1ccccc1 + O=O = O=C=O + O", [2, 15, 12, 6]),
]


@pytest.mark.unit
@pytest.mark.parametrize(("equation", "coefs"), TEXTBOOK)
def test_textbook_formula(equation: str, coefs: list[int]) -> None:
    res = balance_equation(equation)
    assert res.coefficients == coefs
    comps = [species_composition(m, "formula") for m in res.reactants + res.products]
    _, a = element_matrix(comps)
    signed = res.basis[0]
    assert all(v == 0 for v in mat_vec(a, signed))


@pytest.mark.unit
@pytest.mark.parametrize(("equation", "coefs"), SMILES_TEXTBOOK)
def test_textbook_smiles(equation: str, coefs: list[int]) -> None:
    assert balance_equation(equation, "smiles").coefficients == coefs


@pytest.mark.unit
def test_format() -> None:
    res = balance_equation("KMnO4 + HCl -> KCl + MnCl2 + H2O + Cl2")
    assert res.format() == "2 KMnO4 + 16 HCl -> 2 KCl + 2 MnCl2 + 8 H2O + 5 Cl2"


@pytest.mark.unit
@pytest.mark.parametrize(
    "equation",
    [
        "H2O -> H2",  # O only on the left: trivial nullspace
        "NaCl -> Na + Cl2 + O2",  # O2 can only have coefficient 0
        "H2O + O2 -> H2",  # the only balancing has a negative coefficient
        "Fe+2 -> Fe+3",  # charge cannot balance without electrons
    ],
)
def test_impossible(equation: str) -> None:
    with pytest.raises(BalanceError, match="impossible"):
        balance_equation(equation)


@pytest.mark.unit
def test_underdetermined_basis() -> None:
    res = balance_equation("H2 + O2 -> H2O + H2O2")
    assert not res.unique and len(res.basis) == 2
    comps = [species_composition(m, "formula") for m in res.reactants + res.products]
    _, a = element_matrix(comps)
    for nu in res.basis:
        assert any(nu) and all(v == 0 for v in mat_vec(a, nu))


@pytest.mark.unit
def test_parse_leading_coefficients_ignored() -> None:
    eq = parse_equation("2H2 + O2 -> 2 H2O")
    assert eq.reactants == ["H2", "O2"] and eq.products == ["H2O"]
    assert eq.given == [2, None, 2]
    assert balance(eq.reactants, eq.products).coefficients == [2, 1, 2]


@pytest.mark.unit
@pytest.mark.parametrize("bad", ["H2 + O2", "A -> B -> C", "H2 + -> H2O", " -> H2O", "H2 O2 -> H2O"])
def test_parse_errors(bad: str) -> None:
    with pytest.raises(InputError):
        parse_equation(bad)


@pytest.mark.unit
def test_unknown_element_is_input_error() -> None:
    with pytest.raises(InputError):
        balance_equation("Xx + O2 -> XxO")


@pytest.mark.unit
def test_against_chempy() -> None:
    chempy = pytest.importorskip("chempy")
    compared = 0
    for equation, _ in TEXTBOOK:
        eq = parse_equation(equation)
        if "e-" in eq.reactants + eq.products:
            continue
        try:
            reac, prod = chempy.balance_stoichiometry(set(eq.reactants), set(eq.products))
        except Exception:  # chempy declines some inputs; compare only where it answers
            continue
        ours = balance(eq.reactants, eq.products)
        assert ours.coefficients is not None
        got = dict(zip(ours.reactants + ours.products, ours.coefficients, strict=True))
        assert {**{m: int(v) for m, v in reac.items()}, **{m: int(v) for m, v in prod.items()}} == got
        compared += 1
    assert compared >= 15
