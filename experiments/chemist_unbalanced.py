"""What the chemist's-convention reactions that do not balance leave over: the commonest leftovers of one reason, so
that the by-product catalogue can grow where it misses most (boronates, POCl3 remains, silanols, tin halides).

For a seeded sample of the reactions ``unbalanced.tsv`` lists under a reason, the atoms one of each reactant has
beyond one of each product (as a formula; atoms the products need beyond the reactants after a ``-``), counted.
A leftover that recurs is a by-product the catalogue does not hold, or a reagent the record does not count as a
reactant.

    python experiments/chemist_unbalanced.py built/chemist --reason no_real_byproduct --split test --sample 400
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path


def leftover(reactants: list[str], products: list[str]) -> str:
    """``'H2BBrO2'`` (reactants beyond products), ``'C2H4O - H2'`` when the products also need atoms."""
    from gnn_chemalgebra.algebra.balance import species_composition
    from gnn_chemalgebra.chem.composition import CHARGE_KEY
    from gnn_chemalgebra.chem.formula import write_formula

    left: Counter = Counter()
    for m in dict.fromkeys(reactants):
        left.update(species_composition(m, "smiles"))
    for m in dict.fromkeys(products):
        left.subtract(species_composition(m, "smiles"))
    over = Counter({k: v for k, v in left.items() if v > 0 and k != CHARGE_KEY})
    under = Counter({k: -v for k, v in left.items() if v < 0 and k != CHARGE_KEY})
    text = write_formula(over) if over else ""
    return text + (f" - {write_formula(under)}" if under else "")


def sample_leftovers(chemist: Path, reason: str, split: str, n: int, seed: int = 0) -> Counter:
    from gnn_chemalgebra.data.build import bundled_data_dir
    from gnn_chemalgebra.data.chemist import separated
    from gnn_chemalgebra.data.uspto import read_split

    rows = [line.split("\t") for line in (chemist / "unbalanced.tsv").read_text().splitlines()[1:]]
    idx = [int(r[1]) for r in rows if r[0] == split and r[2] == reason]
    random.Random(seed).shuffle(idx)
    chosen = set(idx[:n])
    source = json.loads((chemist / "manifest.json").read_text())["source"]
    src = bundled_data_dir() if source in (None, "bundled data/") else Path(source)
    counts: Counter = Counter()
    for raw in read_split(src, split):
        if raw.index in chosen:
            sides = separated(raw)
            if sides is not None:
                counts[leftover(sides[0], sides[2])] += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("chemist", type=Path, help="folder written by gnnca data chemist")
    ap.add_argument("--reason", default="no_real_byproduct")
    ap.add_argument("--split", default="test")
    ap.add_argument("--sample", type=int, default=400)
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args(argv)
    counts = sample_leftovers(args.chemist, args.reason, args.split, args.sample)
    for text, n in counts.most_common(args.top):
        print(f"{n:5d}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
