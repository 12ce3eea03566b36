"""What the training reactions write (by-products, new three-membered rings) against what a line writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gnn_chemalgebra.inference.outcomes import TrainingOutcomes, split_products, written_byproducts

pytestmark = pytest.mark.unit

# three training reactions: an amide with HCl, a reductive amination with an oxygen atom, an epoxidation
TRAINING = [
    [("CC(=O)Cl", -1), ("NCc1ccccc1", -1), ("CC(=O)NCc1ccccc1", 1), ("Cl", 1)],
    [("O=Cc1ccccc1", -1), ("CN", -1), ("CNCc1ccccc1", 1), ("[O]", 1)],
    [("C=Cc1ccccc1", -1), ("OO", -1), ("c1ccc(C2CO2)cc1", 1), ("O", 1)],
]


def rec(consumed: list[str], written: list[str], main: str) -> dict:
    return {
        "molecules": [{"mol": m, "nu": -1} for m in consumed],
        "new_products": written,
        "main_product": main,
    }


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


def test_an_unseen_by_product_is_noted_and_a_seen_one_is_not() -> None:
    t = TrainingOutcomes.from_reactions(TRAINING, "smiles")
    t.byproducts.pop("O")  # as in the benchmark: no training reaction writes water
    # the oxygen atom of a reductive amination: written by training reactions, so no note (open shell or not)
    assert t.notes(rec(["O=Cc1ccccc1", "CN"], ["CNCc1ccccc1", "[O]"], "CNCc1ccccc1")) == []
    notes = t.notes(rec(["C1CO1", "NCc1ccccc1"], ["O", "c1ccc(CN2CC2)cc1"], "c1ccc(CN2CC2)cc1"))
    assert notes[0] == "by-product(s) no training reaction wrote: O"


def test_a_new_ring_rare_in_training_is_noted() -> None:
    many = TRAINING[:1] * 997 + TRAINING[1:]  # 999 reactions, one epoxidation: 0.1% < 0.2%
    t = TrainingOutcomes.from_reactions(many, "smiles")
    line = rec(["C1CO1", "NCc1ccccc1"], ["Cl", "c1ccc(CN2CC2)cc1"], "c1ccc(CN2CC2)cc1")
    assert t.notes(line) == [
        "forms a three-membered ring the consumed molecules did not have, rare in training: CCN (0 of 999 training "
        "reactions)"
    ]
    epox = rec(["C=Cc1ccccc1", "OO"], ["O", "c1ccc(C2CO2)cc1"], "c1ccc(C2CO2)cc1")
    assert any("CCO (1 of 999" in n for n in t.notes(epox))
    t.rare_share = 0.001  # one in 999 is then common enough
    assert not any("ring" in n for n in t.notes(epox))
    # a ring the consumed molecules brought along is not new
    assert t.notes(rec(["CC(=O)Cl", "NC1CC1"], ["Cl", "CC(=O)NC1CC1"], "CC(=O)NC1CC1")) == []


def test_nothing_to_compare_with_gives_no_notes_and_json_round_trips(tmp_path: Path) -> None:
    assert TrainingOutcomes("smiles").notes(rec(["CN"], ["O", "CN"], "CN")) == []
    meta = tmp_path / "meta-train.jsonl"
    meta.write_text("".join(json.dumps({"nu": [list(p) for p in r]}) + "\n" for r in TRAINING))
    t = TrainingOutcomes.from_meta([meta], "smiles")
    assert t == TrainingOutcomes.from_reactions(TRAINING, "smiles")
    assert TrainingOutcomes.from_json(json.loads(json.dumps(t.to_json()))) == t
