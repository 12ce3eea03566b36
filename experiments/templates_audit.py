"""Audit of a ``gnnca data templates`` folder: every reaction's balance (atoms and charge), and the share of
records per template that give a bond-edit training example (``data.edit_dataset.build_examples``).

    python experiments/templates_audit.py built/templates [--per-template 40]

Prints one row per template (records, sampled, edit examples built, skipped causes) and the totals.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter, defaultdict
from pathlib import Path

from gnn_chemalgebra.chem.composition import element_view, smiles_composition
from gnn_chemalgebra.data.edit_dataset import build_examples


def balanced(rec: dict) -> bool:
    total: Counter = Counter()
    for sign, mols in ((1, rec["reactants"]), (-1, rec["products"] + rec["byproducts"])):
        for m in mols:
            for k, v in element_view(smiles_composition(m)).items():
                total[k] += sign * rec["coefficients"][m] * v
    return not any(total.values())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folder", type=Path)
    ap.add_argument("--per-template", type=int, default=40, help="records sampled per template for edit examples")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    by_template: dict[str, list[dict]] = defaultdict(list)
    n_unbalanced = 0
    with open(args.folder / "reactions-train.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            n_unbalanced += not balanced(rec)
            by_template[rec["source"]["template"]].append(rec)
    rng = random.Random(args.seed)
    print(f"{'template':32s} {'records':>8s} {'sampled':>8s} {'examples':>8s}  skipped")
    tot = Counter()
    for name, recs in by_template.items():
        sample = rng.sample(recs, min(args.per_template, len(recs)))
        _, kept, skipped = build_examples(sample)
        tot.update({"records": len(recs), "sampled": len(sample), "examples": len(kept)})
        print(f"{name:32s} {len(recs):8d} {len(sample):8d} {len(kept):8d}  {skipped or ''}")
    share = tot["examples"] / max(tot["sampled"], 1)
    print(f"{'total':32s} {tot['records']:8d} {tot['sampled']:8d} {tot['examples']:8d}  ({100 * share:.1f}% build)")
    print(f"reactions that do not balance: {n_unbalanced} of {tot['records']}")


if __name__ == "__main__":
    main()
