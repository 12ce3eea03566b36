"""How much of a test set can no model get right from its representation alone? Almost none: on F_T1_x1 test_in one
pair of the 17,822 lines shares a scale-free source with a different target, on S_T1_x1 test_in two lines, a
ceiling of 99.99 EM for both, so the formula model's misses (which halide leaves, which reactant is consumed) are
chemistry it did not learn, not information the formula hides (``results/extra/representation_ceiling.jsonl``).
Method: lines whose source bag (coefficients divided by their gcd, as a scale-free network reads them) is the same
while their targets differ; a model is a function of its input, so of every group of equal sources at most the
most common target can be matched, and the sum of those maxima over n is an exact upper bound on EM for that test
file. With --train, also the share of test lines whose source occurs in the training split and whose most common
training target for it differs (what imitating the training data would get wrong).

    python experiments/representation_ceiling.py --built built/extra --variant ChemAlgebra_F_T1_x1 --split test_in \
        --train train

Prints one JSON line per run (counts and percentages).
"""

import argparse
import json
import math
from collections import Counter, defaultdict
from functools import reduce
from pathlib import Path

from gnn_chemalgebra.chem.bag import parse_bag


def scale_free(line: str) -> tuple[tuple[str, int], ...]:
    """The bag as a sorted multiset of (molecule, coefficient / gcd of the line's coefficients)."""
    terms = parse_bag(line)
    g = reduce(math.gcd, (t.coef for t in terms), 0) or 1
    totals: Counter[str] = Counter()
    for t in terms:
        totals[t.mol] += t.coef // g
    return tuple(sorted(totals.items()))


def read_pairs(folder: Path, split: str) -> list[tuple[tuple, tuple]]:
    src = (folder / f"src-{split}.txt").read_text(encoding="utf-8").splitlines()
    tgt = (folder / f"tgt-{split}.txt").read_text(encoding="utf-8").splitlines()
    if len(src) != len(tgt):
        raise SystemExit(f"{folder}: {len(src)} sources and {len(tgt)} targets in {split}")
    return [(scale_free(s), scale_free(t)) for s, t in zip(src, tgt, strict=True)]


ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--built", type=Path, required=True)
ap.add_argument("--variant", required=True)
ap.add_argument("--split", default="test_in")
ap.add_argument("--train", default="", help="training split to compare with (e.g. train); empty = none")
ap.add_argument("--out", type=Path, help="append the record (one JSON line) to this file")
a = ap.parse_args()

folder = a.built / a.variant
test = read_pairs(folder, a.split)
groups: dict[tuple, Counter] = defaultdict(Counter)
for s, t in test:
    groups[s][t] += 1
n = len(test)
best = sum(max(c.values()) for c in groups.values())
ambiguous = sum(sum(c.values()) for c in groups.values() if len(c) > 1)
rec = {
    "variant": a.variant,
    "split": a.split,
    "n": n,
    "distinct_sources": len(groups),
    "lines_in_ambiguous_groups": ambiguous,
    "ceiling_EM": round(100.0 * best / max(n, 1), 2),
}
if a.train:
    seen: dict[tuple, Counter] = defaultdict(Counter)
    for s, t in read_pairs(folder, a.train):
        seen[s][t] += 1
    in_train = [(s, t) for s, t in test if s in seen]
    differs = sum(1 for s, t in in_train if seen[s].most_common(1)[0][0] != t)
    rec.update(
        train=a.train,
        test_sources_in_train=len(in_train),
        test_sources_in_train_pct=round(100.0 * len(in_train) / max(n, 1), 2),
        train_majority_target_differs=differs,
        train_majority_target_differs_pct=round(100.0 * differs / max(n, 1), 2),
    )
print(json.dumps(rec))
if a.out:
    a.out.parent.mkdir(parents=True, exist_ok=True)
    with open(a.out, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec) + "\n")
