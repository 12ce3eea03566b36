"""What the training reactions write (by-products, new three-membered rings) against what a line writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gnn_chemalgebra.trust.outcomes import TrainingOutcomes, split_products, written_byproducts

pytestmark = pytest.mark.unit

# three training reactions: an amide with HCl, a reductive amination with an oxygen atom, an epoxidation
TRAINING = [
    [("CC(=O)Cl", -1), ("NCc1ccccc1", -1), ("CC(=O)NCc1ccccc1", 1), ("Cl", 1)],
    [("O=Cc1ccccc1", -1), ("CN", -1), ("CNCc1ccccc1", 1), ("[O]", 1)],
    [("C=Cc1ccccc1", -1), ("OO", -1), ("c1ccc(C2CO2)cc1", 1), ("O", 1)],
]


def rec(consumed: list[str], written: list[str], main: str, spectators: tuple[str, ...] = ()) -> dict:
    return {
        "molecules": [{"mol": m, "nu": -1} for m in consumed] + [{"mol": m, "nu": 0} for m in spectators],
        "new_products": written,
        "main_product": main,
    }


REDUCTION = "a reduction (writes the oxygen atom [O]) with no reducing agent in the bag"


def test_the_main_product_has_the_most_atoms_and_the_rest_are_by_products() -> None:
    assert split_products(["Cl", "CC(=O)NCc1ccccc1", "Cl"], "smiles") == ("CC(=O)NCc1ccccc1", ["Cl"])
    assert split_products(["HCl", "C9H11NO"], "formula") == ("C9H11NO", ["HCl"])
    assert split_products([], "smiles") == (None, [])
    assert written_byproducts(rec([], ["O", "c1ccc(CN2CC2)cc1"], "c1ccc(CN2CC2)cc1")) == ["O"]


def test_counts_of_by_products_and_rings() -> None:
    t = TrainingOutcomes.from_reactions(TRAINING, "smiles")
    assert t.reactions == 3
    assert t.byproducts == {"Cl": 1, "O": 1, "[O]": 1}
    assert t.rings == {"CCO": 1}


def test_a_by_product_few_training_reactions_wrote_is_noted_and_a_common_one_is_not() -> None:
    t = TrainingOutcomes.from_reactions(TRAINING[:2] * 5 + TRAINING[2:], "smiles")
    assert t.byproducts == {"Cl": 5, "O": 1, "[O]": 5}
    # the oxygen atom of a reductive amination: written by 5 training reactions, so no by-product note (open shell
    # or not); with a borohydride in the bag nothing is noted at all
    amination = rec(["O=Cc1ccccc1", "CN"], ["CNCc1ccccc1", "[O]"], "CNCc1ccccc1", ("[BH4-]", "[Na+]"))
    assert t.notes(amination) == []
    notes = t.notes(rec(["C1CO1", "NCc1ccccc1"], ["O", "c1ccc(CN2CC2)cc1"], "c1ccc(CN2CC2)cc1"))
    assert notes[0] == "by-product(s) fewer than 5 training reactions wrote: O (1)"
    selenium = t.notes(rec(["CN"], ["[Se]", "CN"], "CN"))
    assert selenium == ["by-product(s) fewer than 5 training reactions wrote: [Se] (0)"]
    t.min_byproduct = 1
    assert not t.notes(rec(["C1CO1", "NCc1ccccc1"], ["O", "OCCNCc1ccccc1"], "OCCNCc1ccccc1"))


def test_a_new_ring_rare_in_training_is_noted() -> None:
    many = TRAINING[:2] * 499 + TRAINING[2:]  # 999 reactions, one epoxidation: 0.1% < 0.2%
    t = TrainingOutcomes.from_reactions(many, "smiles")
    line = rec(["C1CO1", "NCc1ccccc1"], ["Cl", "c1ccc(CN2CC2)cc1"], "c1ccc(CN2CC2)cc1")  # HCl: 499 reactions
    assert t.notes(line) == [
        "forms a three-membered ring the consumed molecules did not have, rare in training: CCN (0 of 999 training "
        "reactions)"
    ]
    epox = rec(["C=Cc1ccccc1", "OO"], ["O", "c1ccc(C2CO2)cc1"], "c1ccc(C2CO2)cc1")
    assert t.notes(epox)[-1].endswith("CCO (1 of 999 training reactions)")
    t.rare_share = 0.001  # one in 999 is then common enough
    assert not any("ring" in n for n in t.notes(epox))
    # a ring the consumed molecules brought along is not new
    assert t.notes(rec(["CC(=O)Cl", "NC1CC1"], ["Cl", "CC(=O)NC1CC1"], "CC(=O)NC1CC1")) == []


def test_nothing_to_compare_with_gives_no_notes_and_json_round_trips(tmp_path: Path) -> None:
    assert TrainingOutcomes("smiles").notes(rec(["CN"], ["O", "CN"], "CN")) == []
    meta = tmp_path / "meta-train.jsonl"
    meta.write_text("".join(json.dumps({"nu": [list(p) for p in r]}) + "\n" for r in TRAINING))
    t = TrainingOutcomes.from_meta([meta], "smiles")
    assert t == TrainingOutcomes.from_reactions(TRAINING, "smiles", [[], [], []])
    assert t.unreduced == 1  # the reductive amination, whose meta line names no bag
    assert TrainingOutcomes.from_json(json.loads(json.dumps(t.to_json()))) == t
    # a sidecar written before the reductions were counted reads back without the count
    old = {k: v for k, v in t.to_json().items() if k != "unreduced"}
    assert TrainingOutcomes.from_json(old).unreduced is None


def test_a_reduction_with_no_reducing_agent_in_the_bag_is_noted() -> None:
    bags = [["CC(=O)Cl", "NCc1ccccc1"], ["O=Cc1ccccc1", "CN", "[BH4-]", "[Na+]"], ["C=Cc1ccccc1", "OO"]]
    bags += [["O=Cc1ccccc1", "CN", "CO"]]  # the same amination, its reductant left out of the record
    t = TrainingOutcomes.from_reactions(TRAINING + TRAINING[1:2], "smiles", bags)
    assert t.unreduced == 1
    t.min_byproduct = 1  # the oxygen atom is a common by-product: only the reduction is noted
    imine = rec(["O=Cc1ccccc1", "CN"], ["CNCc1ccccc1", "[O]"], "CNCc1ccccc1")
    assert t.notes(imine) == [f"{REDUCTION}; training records without one write it (1 of 4)"]
    for reductant in ("[H][H]", "CC[SiH](CC)CC", "[Fe]", "Cl[Sn]Cl", "O=CO"):
        assert t.notes(rec(["O=Cc1ccccc1", "CN"], ["CNCc1ccccc1", "[O]"], "CNCc1ccccc1", (reductant,))) == []
    # a line that removes no oxygen needs no reductant
    assert t.notes(rec(["CC(=O)Cl", "NCc1ccccc1"], ["CC(=O)NCc1ccccc1", "Cl"], "CC(=O)NCc1ccccc1")) == []
    # formulas: the oxygen atom is O (water is H2O); boron with hydrogen counts as a reductant
    f = TrainingOutcomes("formula", reactions=10, byproducts={"O": 10, "H2O": 10})
    boc = rec(["C10H18O5", "C7H9N"], ["O", "C17H27NO4"], "C17H27NO4")
    assert f.notes(boc) == ["a reduction (writes the oxygen atom O) with no reducing agent in the bag"]
    assert f.notes(rec(["C10H18O5", "C7H9N"], ["O", "C17H27NO4"], "C17H27NO4", ("H4B-", "Na+"))) == []
    assert f.notes(rec(["C7H6O", "CH5N"], ["H2O", "C8H9N"], "C8H9N")) == []


def test_the_bundled_smiles_sidecar_flags_water_and_not_the_oxygen_atom() -> None:
    from gnn_chemalgebra.trust.annotate import Trust

    ckpt = Path(__file__).parents[2] / "gnn_chemalgebra" / "checkpoints" / "gnn_smiles_default.pt"
    trust = Trust.load_for(ckpt)
    assert trust is not None and trust.domain is not None and trust.domain.outcomes is not None
    t = trust.domain.outcomes
    assert t.reactions > 100_000 and t.byproducts.get("O", 0) < t.min_byproduct and t.byproducts["[O]"] > 1000
    # the textbook epoxide opening as the model writes it: an aziridine and water
    epoxide = rec(["C1CO1", "NCc1ccccc1"], ["O", "c1ccc(CN2CC2)cc1"], "c1ccc(CN2CC2)cc1")
    notes = t.notes(epoxide)
    assert notes[0].startswith("by-product(s) fewer than 5 training reactions wrote: O (") and "CCN (8 of" in notes[1]
    # the textbook imine as the model writes it (a reductive amination's amine and an oxygen atom): training
    # reactions write that by-product, but nothing in this bag can reduce
    notes = t.notes(rec(["O=Cc1ccccc1", "CN"], ["CNCc1ccccc1", "[O]"], "CNCc1ccccc1"))
    assert len(notes) == 1 and notes[0].startswith(REDUCTION)
