"""Would other balance rules reproduce the paper's USPTO-BAL split? No. Of the 12,016 re-balanced reactions of
USPTO-BAL train+valid, charge-blind labels would count 55 as already balanced, comparing with the atom-mapped product
instead of the Molecular Transformer target 26, and ignoring hydrogens 1,095; none matches the paper's split (about
115 valid and 167 test reactions it counts as balanced need a leftover here), so the benchmark keeps the rules its
page states.

    python experiments/bal_rule_alternatives.py [--built built/full]   (reads uspto_bal/reactions-{train,valid})
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from rdkit import Chem

from gnn_chemalgebra.chem.composition import CHARGE_KEY, element_view, mol_composition
from gnn_chemalgebra.chem.smiles import strip_atom_maps


def side(smiles: list[str]) -> Counter:
    total: Counter = Counter()
    for s in smiles:
        total.update(mol_composition(Chem.MolFromSmiles(s)))
    return total


def charge_blind(c: Counter) -> Counter:
    return Counter({k: v for k, v in element_view(c).items() if k != CHARGE_KEY})


def without_h(c: Counter) -> Counter:
    return Counter({k: v for k, v in c.items() if not k.startswith("H")})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--built", default="built/full")
    args = ap.parse_args()
    stats: Counter = Counter()
    for split in ("train", "valid"):
        for line in (Path(args.built) / "uspto_bal" / f"reactions-{split}.jsonl").read_text().splitlines():
            r = json.loads(line)
            if r["status"] != "rebalanced":
                continue
            stats["rebalanced"] += 1
            cr = side([m for m in r["reactants"] if m != r["leftover_reactant"]])
            cp = side([m for m in r["products"] if m != r["leftover_product"]])
            stats["balanced_ignoring_charge"] += charge_blind(cr) == charge_blind(cp)
            stats["balanced_ignoring_H"] += without_h(cr) == without_h(cp)
            mapped = [
                Chem.MolToSmiles(strip_atom_maps(Chem.MolFromSmiles(x))) for x in r["mapped"].split(">>")[1].split(".")
            ]
            stats["balanced_vs_mapped_product"] += side(mapped) == cr
    print(dict(stats))


if __name__ == "__main__":
    main()
