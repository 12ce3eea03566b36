"""The artificial leftover chain and the rules that guess it from an unordered reactant list."""

from __future__ import annotations

from collections import Counter

import pytest

from gnn_chemalgebra.chem.leftover import (
    chain_smiles,
    formula_chain_admissible,
    leftover_composition,
    leftover_from_composition,
    leftover_molecule,
    leftover_sorted_reactants,
)
from gnn_chemalgebra.errors import ChemistryError

pytestmark = pytest.mark.unit


def test_chain_keeps_the_order_of_the_labels() -> None:
    assert chain_smiles(["C", "N"]) == "[C][N]"
    assert leftover_molecule(Counter()) is None
    assert leftover_molecule(Counter({"O": 1, "H": 1})) == "[OH]"  # RDKit folds the bracket H into O


def test_leftover_rule_skips_chains_rdkit_rejects() -> None:
    # A training reaction (KCN + a benzylic alcohol): sorted order meets K, then O, then H, and the chain
    # [K][O][H] is rejected; the builder, with the alcohol first, wrote O, H, K -> [OH][K].
    reactants = ["N#[C][K]", "Cc1cc(CO)ccn1"]
    products = ["Cc1cc(CC#N)ccn1"]
    assert leftover_sorted_reactants(reactants, products) is None
    assert leftover_from_composition(reactants, products) == "[OH][K]"
    assert leftover_from_composition(["CCO"], ["CCO"]) is None


def test_an_unreadable_smiles_is_a_chemistry_error_naming_it() -> None:
    with pytest.raises(ChemistryError) as err:
        leftover_from_composition(["CC(=O)Cl", "N"], ["C1CC"])
    assert err.value.term == "C1CC"
    with pytest.raises(ChemistryError):
        leftover_composition(["C1CC"], ["C"])


@pytest.mark.parametrize(
    ("formula", "admissible"),
    [
        ("HCl", True), ("H2", True), ("O", True), ("Cl2", True), ("HIO", True), ("HClO", True), ("HBiBr2O", True),
        ("ClO-", True),  # an ion: no verdict
        ("H2O", False), ("CH2", False), ("H3N", False), ("CH4O", False), ("C2H4", False),
    ],
)  # fmt: skip
def test_formula_chain_admissible(formula: str, admissible: bool) -> None:
    """A leftover formula is one the builder could write exactly when some order of its element groups (each
    element's atoms together, as the builder writes them) is a chain RDKit accepts."""
    import itertools

    from rdkit import Chem

    from gnn_chemalgebra.chem.formula import parse_formula

    assert formula_chain_admissible(formula) is admissible
    if not admissible:  # checked independently: every order of the groups is rejected
        groups = list(parse_formula(formula).items())
        for order in itertools.permutations(groups):
            assert Chem.MolFromSmiles(chain_smiles(e for e, n in order for _ in range(n))) is None
