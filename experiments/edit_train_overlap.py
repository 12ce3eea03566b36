"""Does the edit model's training data reach USPTO-BAL valid/test? Not through the extra reactions: 0 USPTO-full
training reactions of the extra build share a main product with the 19,141 USPTO-BAL valid/test reactions; the
local train split has 375 such and 151 identical reactions, USPTO-MIT's own duplicates across its splits (the
unchanged local protocol). Counted per record source, main product and whole reaction (reactants and main
products); the records' SMILES are the build's canonical forms, so equal strings are equal molecules.

    python experiments/edit_train_overlap.py --built built/extra      (prints one JSON line)
"""

import argparse
import json
from pathlib import Path

from gnn_chemalgebra.chem.edits import gold_products
from gnn_chemalgebra.data.edit_dataset import load_records, record_source

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--built", type=Path, default=Path("built/extra"))
a = ap.parse_args()


def reaction_key(rec: dict) -> tuple:
    return tuple(sorted(rec["reactants"])), tuple(sorted(gold_products(rec)))


held = [r for s in ("valid", "test") for r in load_records(a.built / "uspto_bal" / f"reactions-{s}.jsonl")]
held_products = {p for r in held for p in gold_products(r)}
held_reactions = {reaction_key(r) for r in held}
out: dict[str, dict[str, int]] = {}
for rec in load_records(a.built / "uspto_bal" / "reactions-train.jsonl"):
    row = out.setdefault(record_source(rec), {"train_records": 0, "shared_main_product": 0, "same_reaction": 0})
    row["train_records"] += 1
    row["shared_main_product"] += any(p in held_products for p in gold_products(rec))
    row["same_reaction"] += reaction_key(rec) in held_reactions
print(json.dumps({"built": str(a.built), "valid_test_reactions": len(held), "by_source": out}))
