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


def test_admissibility_read_atom_by_atom_is_rdkits_verdict_on_the_whole_chain() -> None:
    """The admissibility test reads a chain of non-metals atom by atom instead of parsing each order; on 1,500
    random formulas (non-metals, and metals, whose chains are still parsed) it says what parsing every order says."""
    import itertools
    import random

    from rdkit import Chem

    from gnn_chemalgebra.chem.formula import parse_formula
    from gnn_chemalgebra.chem.leftover import MAX_ORDERS

    def parsed(formula: str) -> bool:
        groups = list(parse_formula(formula).items())
        orders = itertools.islice(itertools.permutations(groups), MAX_ORDERS)
        return any(Chem.MolFromSmiles(chain_smiles(e for e, n in o for _ in range(n))) is not None for o in orders)

    rng = random.Random(0)
    nonmetals = ["C", "H", "N", "O", "S", "Cl", "Br", "I", "F", "P", "B", "Si", "Se"]
    metals = ["Na", "K", "Li", "Mg", "Zn", "Sn", "Cu", "Fe", "Al"]
    seen = {True: 0, False: 0}
    for _ in range(1500):
        pool = nonmetals if rng.random() < 0.8 else nonmetals + metals
        formula = "".join(f"{e}{rng.randint(1, 4)}" for e in rng.sample(pool, rng.randint(1, 6)))
        verdict = formula_chain_admissible(formula)
        assert verdict is parsed(formula), formula
        seen[verdict] += 1
    assert min(seen.values()) > 100  # both verdicts are exercised
