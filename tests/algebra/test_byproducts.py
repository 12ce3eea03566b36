"""Closing real reactions with real by-products: the set a chemist writes, exact coefficients, and why not."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gnn_chemalgebra.algebra.balance import species_composition
from gnn_chemalgebra.algebra.byproducts import ByproductClosure, close_with_byproducts, salt_candidates
from gnn_chemalgebra.errors import InputError

pytestmark = pytest.mark.unit


def _balanced(c: ByproductClosure, repr: str) -> bool:
    """Every element and the charge: sum of the reactants' atoms equals that of the products and by-products."""
    total: Counter = Counter()
    n = len(c.reactants)
    for mol, k in zip(c.reactants, c.coefficients[:n], strict=True):
        for key, v in species_composition(mol, repr).items():
            total[key] += k * v
    for mol, k in zip((*c.products, *c.byproducts), c.coefficients[n:], strict=True):
        for key, v in species_composition(mol, repr).items():
            total[key] -= k * v
    return not any(total.values())


@pytest.mark.parametrize(
    ("name", "reactants", "products", "byproducts", "coefficients"),
    [
        ("amide from acid + amine", ["CC(=O)O", "NCc1ccccc1"], ["CC(=O)NCc1ccccc1"], ("O",), (1, 1, 1, 1)),
        ("Fischer esterification", ["CC(=O)O", "CCO"], ["CCOC(C)=O"], ("O",), (1, 1, 1, 1)),
        (
            "ester hydrolysis, NaOH as ions, salt given",
            ["COC(=O)c1ccccc1", "[Na+]", "[OH-]"],
            ["O=C([O-])c1ccccc1", "[Na+]"],
            ("CO",),
            (1, 1, 1, 1, 1, 1),
        ),
        (
            "ester hydrolysis, NaOH as one salt",
            ["COC(=O)c1ccccc1", "[Na+].[OH-]"],
            ["O=C([O-])c1ccccc1.[Na+]"],
            ("CO",),
            (1, 1, 1, 1),
        ),
        (
            "ester hydrolysis, covalent NaOH",
            ["COC(=O)c1ccccc1", "O[Na]"],
            ["O=C(O[Na])c1ccccc1"],
            ("CO",),
            (1, 1, 1, 1),
        ),
        ("Boc removal (acid as reagent)", ["CC(C)(C)OC(=O)NCc1ccccc1"], ["NCc1ccccc1"], ("O=C=O", "C=C(C)C"), (1,) * 4),
        (
            "Boc removal with HCl to the hydrochloride",
            ["CC(C)(C)OC(=O)NCc1ccccc1", "Cl"],
            ["[NH3+]Cc1ccccc1.[Cl-]"],
            ("O=C=O", "C=C(C)C"),
            (1,) * 5,
        ),
        (
            "Boc removal with TFA to the trifluoroacetate",
            ["CC(C)(C)OC(=O)NCc1ccccc1", "O=C(O)C(F)(F)F"],
            ["[NH3+]Cc1ccccc1.O=C([O-])C(F)(F)F"],
            ("O=C=O", "C=C(C)C"),
            (1,) * 5,
        ),
        (
            "Suzuki coupling with water: boric acid and HBr",
            ["OB(O)c1ccccc1", "Brc1ccccc1", "O"],
            ["c1ccc(-c2ccccc2)cc1"],
            ("Br", "OB(O)O"),
            (1,) * 6,
        ),
        (
            "Suzuki coupling with NaOH: boric acid and NaBr (as ions)",
            ["OB(O)c1ccccc1", "Brc1ccccc1", "[Na+]", "[OH-]"],
            ["c1ccc(-c2ccccc2)cc1"],
            ("OB(O)O", "[Br-].[Na+]"),
            (1,) * 7,
        ),
        ("nitro reduction with H2", ["O=[N+]([O-])c1ccccc1", "[H][H]"], ["Nc1ccccc1"], ("O",), (1, 3, 1, 2)),
        (
            "SN2 with sodium azide (ions)",
            ["CCCCCBr", "[Na+]", "[N-]=[N+]=[N-]"],
            ["CCCCCN=[N+]=[N-]"],
            ("[Br-].[Na+]",),
            (1, 1, 1, 1, 1),
        ),
        ("methane combustion", ["C", "O=O"], [], ("O", "O=C=O"), (1, 2, 2, 1)),
        ("zinc and hydrochloric acid", ["[Zn]", "Cl"], ["Cl[Zn]Cl"], ("[H][H]",), (1, 2, 1, 1)),
        ("ethanol dehydration", ["CCO"], ["C=C"], ("O",), (1, 1, 1)),
        # redox in water: the metal's other aqueous ion leaves; acid consumed gives water, never hydroxide
        ("iron(III) and iodide", ["[Fe+3]", "[I-]"], ["II"], ("[Fe+2]",), (2, 2, 1, 2)),
        (
            "dichromate and iron(II) in acid",
            ["[O-][Cr](=O)(=O)O[Cr](=O)(=O)[O-]", "[Fe+2]", "[H+]"],
            ["[Fe+3]"],
            ("O", "[Cr+3]"),
            (1, 6, 14, 6, 7, 2),
        ),
    ],
)
def test_real_reactions_close_with_the_by_products_a_chemist_writes(
    name: str,
    reactants: list[str],
    products: list[str],
    byproducts: tuple[str, ...],
    coefficients: tuple[int, ...],
) -> None:
    got = close_with_byproducts(reactants, products)
    assert got.ok, (name, got.reason)
    assert got.byproducts == byproducts, name
    assert got.coefficients == coefficients, name
    assert got.reason == "" and got.leftover is None
    assert _balanced(got, "smiles")


def test_a_lone_cation_beside_a_given_anion_is_a_spectator() -> None:
    """NaOH as ions with the carboxylate given alone: the sodium stays as it is (coefficient 0), methanol leaves."""
    got = close_with_byproducts(["COC(=O)c1ccccc1", "[Na+]", "[OH-]"], ["O=C([O-])c1ccccc1"])
    assert got.ok and got.byproducts == ("CO",) and got.spectators == ("[Na+]",)
    assert got.coefficients == (1, 0, 1, 1, 1)
    assert _balanced(got, "smiles")


@pytest.mark.parametrize(
    ("reactants", "products", "byproducts", "coefficients"),
    [
        (["CH4", "O2"], [], ("H2O", "CO2"), (1, 2, 2, 1)),
        (["Zn", "HCl"], ["ZnCl2"], ("H2",), (1, 2, 1, 1)),
        (["C2H4O2", "C7H9N"], ["C9H11NO"], ("H2O",), (1, 1, 1, 1)),
        (["C8H8O2", "NaOH"], ["C7H5NaO2"], ("CH4O",), (1, 1, 1, 1)),
        (["C5H11Br", "NaN3"], ["C5H11N3"], ("BrNa",), (1, 1, 1, 1)),
        (["C6H5NO2", "H2"], ["C6H7N"], ("H2O",), (1, 3, 1, 2)),
    ],
)
def test_formula_lines_close_with_the_catalogue_as_formulas(
    reactants: list[str], products: list[str], byproducts: tuple[str, ...], coefficients: tuple[int, ...]
) -> None:
    got = close_with_byproducts(reactants, products, repr="formula")
    assert got.ok, got.reason
    assert (got.byproducts, got.coefficients) == (byproducts, coefficients)
    assert _balanced(got, "formula")


def test_a_reduction_without_its_reductant_does_not_close_and_says_what_is_short() -> None:
    got = close_with_byproducts(["O=[N+]([O-])c1ccccc1"], ["Nc1ccccc1"])
    assert not got.ok and got.byproducts == () and got.coefficients == ()
    assert got.leftover == "C6H3NO4"  # 2 ArNO2 hold one aniline and leave this
    assert "more H than" in got.reason and "do not balance" in got.reason


def test_carbon_by_products_are_fragments_of_a_reactant() -> None:
    """Methanol leaves a transesterification (not water from two esters), a reduction without its reductant does
    not close with carbon oxides or HCN made from the ring even with three by-products allowed, and a ketone with a
    borohydride does not make the borohydride a spectator to close with fragments it does not hold."""
    got = close_with_byproducts(["COC(C)=O", "CCO"], ["CCOC(C)=O"])
    assert got.byproducts == ("CO",) and got.coefficients == (1, 1, 1, 1)
    assert not close_with_byproducts(["O=[N+]([O-])c1ccccc1"], ["Nc1ccccc1"], max_added=3).ok
    assert not close_with_byproducts(["CC(C)=O", "[BH4-]"], ["CCC"]).ok
    nitro = close_with_byproducts(["O=[N+]([O-])c1ccccc1", "[H][H]"], ["c1ccccc1"])  # the N leaves as NH3
    assert nitro.byproducts == ("O", "N") and nitro.coefficients == (1, 4, 1, 2, 1)


def test_a_suzuki_coupling_without_base_or_water_does_not_close() -> None:
    got = close_with_byproducts(["OB(O)c1ccccc1", "Brc1ccccc1"], ["c1ccc(-c2ccccc2)cc1"])
    assert not got.ok and got.leftover == "H2BBrO2"


def test_an_element_the_reactants_lack_is_named() -> None:
    got = close_with_byproducts(["CCO"], ["CCCl"])
    assert not got.ok and "Cl, which no reactant supplies" in got.reason


def test_salts_follow_how_the_input_writes_its_metal() -> None:
    ions = salt_candidates(["[K+]", "[OH-]"], "smiles")
    assert "[Br-].[K+]" in ions and "[Br-]" in ions  # the salt as ions, and the lone counter-ion
    assert "[K+].[OH-]" not in ions  # the reactants' own anion is not a by-product
    assert "[K][Br]" in salt_candidates(["O[K]"], "smiles")
    assert "[Cl][Zn][Cl]" in salt_candidates(["[Zn]"], "smiles")  # RDKit brackets atoms bonded to a metal
    assert "BrNa" in salt_candidates(["NaOH"], "formula")
    written_as_ions = salt_candidates(["C7H7Br", "K+", "I-"], "formula")
    assert "Br-" in written_as_ions and "BrK" not in written_as_ions  # the potassium ion stays one
    sn2 = close_with_byproducts(["C7H7Br", "K+", "I-"], ["C7H7I"], repr="formula")
    assert (sn2.byproducts, sn2.spectators) == (("Br-",), ("K+",))


def test_bad_input_is_one_clear_error() -> None:
    with pytest.raises(InputError):
        close_with_byproducts([], ["O"])
    with pytest.raises(InputError):
        close_with_byproducts(["CCO"], ["C=C"], max_added=9)
    with pytest.raises(InputError):
        close_with_byproducts(["CCO", "CCO"], ["C=C"])


POOL = [
    "CC(=O)O", "NCc1ccccc1", "CCO", "O", "Cl", "[H][H]", "O=O", "C", "CCCCBr", "[Na+]", "[OH-]",
    "O=[N+]([O-])c1ccccc1", "CC(C)(C)OC(=O)NC", "OB(O)c1ccccc1", "CC(=O)Cl", "[Zn]", "C=C",
]  # fmt: skip
PRODUCTS = ["CC(=O)NCc1ccccc1", "CCOC(C)=O", "Nc1ccccc1", "CCCCO", "CN", "c1ccccc1", "CC", "", "CC(=O)OCC"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(POOL), min_size=1, max_size=3, unique=True), st.sampled_from(PRODUCTS))
def test_any_closure_returned_balances(reactants: list[str], product: str) -> None:
    products = [product] if product else []
    got = close_with_byproducts(reactants, products)
    if got.ok:
        assert _balanced(got, "smiles")
        assert len(got.coefficients) == len(reactants) + len(products) + len(got.byproducts)
        assert all(k > 0 for k in got.coefficients[len(reactants) :])
        assert all(k > 0 for m, k in zip(reactants, got.coefficients, strict=False) if m not in got.spectators)
    else:
        assert got.reason


@pytest.mark.unit
@pytest.mark.parametrize(
    ("base", "acid"),
    [("c1ccncc1", "c1cc[nH+]cc1"), ("CCN(CC)CC", "CC[NH+](CC)CC"), ("c1c[nH]cn1", "c1c[nH+]c[nH]1")],
)
def test_a_basic_reactant_offers_its_conjugate_acid(base: str, acid: str) -> None:
    from gnn_chemalgebra.algebra.byproducts import ion_candidates

    assert acid in ion_candidates([base, "CC(=O)Cl"], "smiles")


@pytest.mark.unit
@pytest.mark.parametrize("smiles", ["CC(=O)Nc1ccccc1", "Nc1ccccc1", "CC#N", "O=[N+]([O-])c1ccccc1", "CCO"])
def test_no_conjugate_acid_for_amides_anilines_nitriles_or_nitro(smiles: str) -> None:
    from gnn_chemalgebra.algebra.byproducts import _protonated

    assert _protonated(smiles) is None


@pytest.mark.unit
def test_ions_close_a_substitution_written_with_ions() -> None:
    """Cyanide displacing bromide leaves the bromide anion (its sodium is a reagent, written apart); pyridine takes
    up the HCl of an acylation as pyridinium chloride."""
    sn2 = close_with_byproducts(["CCCCBr", "[C-]#N"], ["CCCCC#N"])
    assert sn2.ok and sn2.byproducts == ("[Br-]",) and sn2.coefficients == (1, 1, 1, 1)
    acyl = close_with_byproducts(["CC(=O)Cl", "Oc1ccccc1", "c1ccncc1"], ["CC(=O)Oc1ccccc1"])
    assert acyl.ok and set(acyl.byproducts) == {"[Cl-]", "c1cc[nH+]cc1"}
    plain = close_with_byproducts(["CC(=O)Cl", "NCc1ccccc1"], ["CC(=O)NCc1ccccc1"])
    assert plain.ok and plain.byproducts == ("Cl",)  # without a base the acid leaves as HCl, not as ions
