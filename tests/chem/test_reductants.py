"""Which molecules can reduce, read from SMILES and from formulas."""

from __future__ import annotations

import pytest

from gnn_chemalgebra.chem.molecule import smiles_to_formula
from gnn_chemalgebra.chem.reductants import reducing_agent, reductant_in, writes_reduction

pytestmark = pytest.mark.unit

REDUCING = [
    "[H][H]", "[H-]", "O=CO", "O=C[O-]", "NN", "[Zn]", "[Fe]", "[Li]", "[BH4-]", "[BH3-]C#N",
    "CC(=O)O[BH-](OC(C)=O)OC(C)=O", "CC(C)C[AlH]CC(C)C", "[AlH4-]", "CC[SiH](CC)CC", "CCCC[SnH](CCCC)CCCC",
    "Cl[Sn]Cl", "[Na+].[H-]", "[NaH]", "O=S([O-])S(=O)[O-]", "[S-2]", "c1ccc(P(c2ccccc2)c2ccccc2)cc1", "B",
    "CC1(C)OBOC1(C)C",
]  # fmt: skip
NOT_REDUCING = [
    "[Na+]", "[Pd]", "[Ni]", "O=Cc1ccccc1", "CN", "CC(C)(C)OC(=O)OC(=O)OC(C)(C)C", "ClCCl", "CO", "[Cl-]",
    "O=P(c1ccccc1)(c1ccccc1)c1ccccc1", "CC(=O)O", "O",
]  # fmt: skip


@pytest.mark.parametrize("smiles", REDUCING)
def test_reducing_agents_are_found_in_smiles_and_in_their_formulas(smiles: str) -> None:
    assert reducing_agent(smiles, "smiles")
    assert reducing_agent(smiles_to_formula(smiles), "formula")


@pytest.mark.parametrize("smiles", NOT_REDUCING)
def test_other_molecules_are_not_reducing_agents(smiles: str) -> None:
    assert not reducing_agent(smiles, "smiles")
    assert not reducing_agent(smiles_to_formula(smiles), "formula")


def test_a_formula_with_boron_and_hydrogen_counts_as_a_hydride_source() -> None:
    # a boronic acid has no B-H bond; its SMILES says so, its formula cannot
    assert not reducing_agent("OB(O)c1ccccc1", "smiles")
    assert reducing_agent("C6H7BO2", "formula")


def test_unparsable_molecules_are_not_reductants_and_a_reduction_is_the_oxygen_atom() -> None:
    assert not reducing_agent("C1CC", "smiles") and not reducing_agent("Xx2", "formula")
    assert reductant_in(["CN", "[H][H]"], "smiles") and not reductant_in(["CN", "CO"], "smiles")
    assert writes_reduction(["CNCc1ccccc1", "[O]"], "smiles") and not writes_reduction(["O"], "smiles")
    assert writes_reduction(["O", "C8H11N"], "formula") and not writes_reduction(["H2O"], "formula")
