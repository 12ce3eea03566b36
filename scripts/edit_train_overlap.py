"""How many edit-model training reactions of a built folder share a main product, or the whole reaction
(reactants and main products), with a USPTO-BAL valid or test reaction, per record source (issue 14.3).

    python scripts/edit_train_overlap.py --built built/extra

The records' SMILES are the build's canonical forms, so equal strings are equal molecules. Prints one JSON line.
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
