"""Type-2 Bayes ceiling estimated while ignoring that equal strings share k (the page's approximation).

Usage: python scripts/ceiling_without_shared_strings.py [--built built/full]   (reads uspto_bal/reactions-test)

Simulates one seeded Type-2 draw per MIT-test-derived base reaction and averages the largest posterior mass
when a product string that is also a reactant or reagent is treated as uninformative. Rule "all": k_hat is
drawn up to the minimum k over all molecules (the builder's rule); "RP": over reactants and products only.
The exact ceiling, which uses shared strings, is `gnnca ceiling`.
"""

from __future__ import annotations

import argparse
import json
import random
from fractions import Fraction
from pathlib import Path


def approx_ceiling(recs: list[dict], coef_set: tuple[int, ...], rule: str, rng: random.Random) -> float:
    total = 0.0
    for r in recs:
        reactants, reagents, products = r["reactants"], r["reagents"], r["products"]
        mols = list(dict.fromkeys(reactants + reagents + products))
        k = {m: rng.choice(coef_set) for m in mols}
        pool = mols if rule == "all" else list(dict.fromkeys(reactants + products))
        k_hat = rng.randint(1, min(k[m] for m in pool))
        post: dict[int, Fraction] = {}
        for cand in range(1, max(coef_set) + 1):
            implied = {m: k[m] for m in reactants + reagents}
            ok = True
            for p in products:
                if p in implied:  # shared with a reactant/reagent: treated as uninformative
                    continue
                implied[p] = k[p] - k_hat + cand if k[p] - k_hat > 0 else cand
                ok = ok and implied[p] in coef_set
            if ok and all(implied[m] >= cand for m in pool):
                post[cand] = Fraction(1, min(implied[m] for m in pool))
        total += float(max(post.values()) / sum(post.values()))
    return 100 * total / len(recs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--built", default="built/full")
    args = ap.parse_args()
    path = Path(args.built) / "uspto_bal" / "reactions-test.jsonl"
    recs = [json.loads(x) for x in path.read_text().splitlines()]
    rng = random.Random(0)
    for coef_set, name in (((1, 2, 3, 4, 5), "in"), ((6, 7, 8, 9, 10), "out")):
        for rule in ("all", "RP"):
            print(name, rule, round(approx_ceiling(recs, coef_set, rule, rng), 2))


if __name__ == "__main__":
    main()
