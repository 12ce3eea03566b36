"""Is a variant's x5 training set its x1 set five times over, as a scale-free model reads it? For Type 1, yes: every
(source, target) pair of F_T1_x5 (566,975 lines, 109,359 distinct pairs) and S_T1_x5 (113,383 distinct pairs) occurs
exactly five times as often as in x1, so an x5 run is the x1 run with five times the epochs and the x1 run stands
for both; the Type-2 x5 sets are not (559,109 / 562,247 distinct pairs against 113,254 / 113,395 in x1). Each line
pair is reduced to what a network that only sees scale-free features can tell apart: every bag's coefficients
divided by their gcd, molecules summed and sorted.

    python experiments/x5_repeats.py --built built/extra --variants F_T1 S_T1 F_T2 S_T2     (one JSON line each)
"""

import argparse
import json
from collections import Counter
from functools import reduce
from math import gcd
from pathlib import Path

from gnn_chemalgebra.chem.bag import bag_totals, parse_bag


def scale_free(line: str) -> tuple[tuple[str, int], ...]:
    totals = bag_totals(parse_bag(line))
    g = reduce(gcd, totals.values())
    return tuple(sorted((m, k // g) for m, k in totals.items()))


def pairs(folder: Path) -> Counter:
    with open(folder / "src-train.txt") as src, open(folder / "tgt-train.txt") as tgt:
        return Counter((scale_free(s), scale_free(t)) for s, t in zip(src, tgt, strict=True))


ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--built", type=Path, default=Path("built/extra"))
ap.add_argument("--variants", nargs="+", default=["F_T1", "S_T1", "F_T2", "S_T2"])
a = ap.parse_args()
for v in a.variants:
    x1, x5 = pairs(a.built / f"ChemAlgebra_{v}_x1"), pairs(a.built / f"ChemAlgebra_{v}_x5")
    five = Counter({k: 5 * n for k, n in x1.items()})
    print(json.dumps({
        "variant": v, "x1_lines": sum(x1.values()), "x5_lines": sum(x5.values()),
        "x1_distinct_pairs": len(x1), "x5_distinct_pairs": len(x5),
        "x5_is_five_times_x1": x5 == five,
        "x5_pairs_not_in_x1": sum((x5 - five).values()),
    }))  # fmt: skip
