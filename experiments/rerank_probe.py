"""Could simple line features rerank the GNN's beam, and what do the last F_T1 points consist of? A reranker does not
pay: over the F_T1_x1 validation lines' beam-10 candidates of a two-model ensemble, out-of-fold logistic regression
moved top-1 EM from 86.88 to 86.96 at best. With the four-model ensemble's beam, top-1 is 88.25, top-2 92.34, top-5
94.77, and on 56 lines (4.2%) the gold line is not among the ten. Where every consumed molecule left with the gold
by-product in some training line (767 lines) the ensemble scores 91.26, on the other 552 lines 84.06; of its 155
misses, 67 have the gold decision in the training lines, 54 the predicted one, 32 both.

    gnnca predict built/extra/ChemAlgebra_F_T1_x1/src-valid.txt --extent bayes --checkpoint A.pt,B.pt --beam 10 \
      --json > beam.jsonl
    python experiments/rerank_probe.py --built built/extra --beam beam.jsonl [--memory]

Each beam candidate gets its log-probability, rank and gap to the first, its counts of new products, consumed
molecules and leftovers, the leftover's prior and the consumed molecules' role priors (counted on the training
lines), and its main product's unsaturation and H/C ratio; top-1 EM after reranking, out of fold, is printed
beside the beam's own top-1 EM. ``--memory`` adds what the training lines remember of the line's own molecules
(how often each consumed molecule left with this by-product, how often each pair present was consumed together)
and splits the beam's top-1 EM by whether the training lines hold the gold decision (and, for the misses, whether
they hold the gold and the predicted decision). Also printed: the share of lines with the gold line in the beam's
first 2 and 5, and the lines without it in the beam at all.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from gnn_chemalgebra.chem.bag import parse_bag
from gnn_chemalgebra.chem.formula import parse_formula


def mols(line: str) -> list[str]:
    return [t.mol for t in parse_bag(line)]


def heavy(formula: str) -> int:
    return sum(n for el, n in parse_formula(formula).items() if el not in ("H", "charge"))


class Priors:
    """Role and leftover counts over the training lines."""

    def __init__(self, folder: Path) -> None:
        self.consumed, self.seen, self.left = Counter(), Counter(), Counter()
        for s, t in zip((folder / "src-train.txt").open(), (folder / "tgt-train.txt").open(), strict=True):
            src, tgt = Counter(mols(s)), Counter(mols(t))
            self.seen.update(src.keys())
            self.consumed.update((src - tgt).keys())
            self.left[self.leftover(src, tgt)] += 1
        self.n_left = sum(self.left.values())

    @staticmethod
    def leftover(src: Counter, tgt: Counter) -> str:
        new = list((tgt - src).elements())
        if len(new) < 2:
            return "<none>"
        main = max(new, key=heavy)
        return ".".join(sorted(m for m in new if m != main))

    def features(self, source: str, cand: str, logp: float, top: float, rank: int) -> list[float]:
        src, tgt = Counter(mols(source)), Counter(mols(cand))
        new, gone = list((tgt - src).elements()), list((src - tgt).elements())
        left = self.leftover(src, tgt)
        role = [math.log((self.consumed[m] + 1) / (self.seen[m] + 2)) for m in gone] or [0.0]
        kept = [math.log((self.consumed[m] + 1) / (self.seen[m] + 2)) for m in set(src) - set(gone)] or [-5.0]
        main = parse_formula(max(new, key=heavy)) if new else Counter()
        c, h = main.get("C", 0), main.get("H", 0)
        halo = sum(main.get(x, 0) for x in ("F", "Cl", "Br", "I"))
        dbe = (2 * c + 2 + main.get("N", 0) - h - halo) / 2 if new else 0.0
        return [logp, logp - top, math.log(rank + 1), len(new), len(gone), float(left == "<none>"),
                math.log((self.left[left] + 1) / (self.n_left + 1)), min(role), sum(role), max(kept),
                dbe / (c + 1), h / (c + 1), float(dbe < 0), float(dbe != int(dbe))]  # fmt: skip


class Memory:
    """Per-molecule recall of the training lines: which by-product a consumed molecule left with, and which pairs
    of molecules present were consumed together."""

    def __init__(self, folder: Path) -> None:
        self.cons, self.seen, self.with_byp = Counter(), Counter(), Counter()
        self.pair_seen, self.pair_cons = Counter(), Counter()
        for s, t in zip((folder / "src-train.txt").open(), (folder / "tgt-train.txt").open(), strict=True):
            src, gone, byp = self.decision(s, t)
            self.seen.update(src)
            self.cons.update(gone)
            self.with_byp.update((m, byp) for m in gone)
            for a, b in self.pairs(src):
                self.pair_seen[a, b] += 1
                self.pair_cons[a, b] += a in gone and b in gone

    @staticmethod
    def decision(source: str, target: str) -> tuple[list[str], set[str], str]:
        """The line's distinct source molecules, the consumed ones, and the by-products (``Priors.leftover``)."""
        src, tgt = Counter(mols(source)), Counter(mols(target))
        return sorted(src), set((src - tgt).elements()), Priors.leftover(src, tgt)

    @staticmethod
    def pairs(src: list[str]) -> list[tuple[str, str]]:
        return [(a, b) for i, a in enumerate(src) for b in src[i + 1 :]] if len(src) <= 12 else []

    def recalled(self, source: str, target: str) -> bool:
        """Every consumed molecule of this decision left with its by-product in some training line."""
        _, gone, byp = self.decision(source, target)
        return all(self.with_byp[m, byp] for m in gone)

    def features(self, source: str, cand: str) -> list[float]:
        src, gone, byp = self.decision(source, cand)
        left = [math.log((self.with_byp[m, byp] + 0.5) / (self.cons[m] + 2.5)) for m in gone] or [0.0]
        pair = []
        for a, b in self.pairs(src):
            if self.pair_seen[a, b]:
                q = (self.pair_cons[a, b] + 0.5) / (self.pair_seen[a, b] + 1)
                pair.append(math.log(q if a in gone and b in gone else 1 - q + 1e-3))
        return [min(left), sum(left), float(all(self.cons[m] for m in gone)), sum(pair), float(len(pair))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--built", type=Path, required=True)
    ap.add_argument("--variant", default="ChemAlgebra_F_T1_x1")
    ap.add_argument("--beam", type=Path, required=True, help="gnnca predict --beam K --json of the valid lines")
    ap.add_argument("--memory", action="store_true", help="add the per-molecule memory features (class Memory)")
    args = ap.parse_args()
    folder = args.built / args.variant
    priors = Priors(folder)
    memory = Memory(folder) if args.memory else None
    split: Counter = Counter()
    targets = (folder / "tgt-valid.txt").read_text().splitlines()
    gold = [sorted(mols(t)) for t in targets]
    X, y, g = [], [], []
    for i, (rec, want) in enumerate(zip(map(json.loads, args.beam.open()), gold, strict=True)):
        top = rec["beam"][0]["logp"]
        if memory is not None:
            key = "recalled" if memory.recalled(rec["source"], targets[i]) else "not_recalled"
            split[key, "n"] += 1
            split[key, "ok"] += sorted(mols(rec["beam"][0]["prediction"])) == want
            if sorted(mols(rec["beam"][0]["prediction"])) != want:  # a miss: which decisions the training lines hold
                pred = memory.recalled(rec["source"], rec["beam"][0]["prediction"])
                split["miss", "n"] += 1
                split["miss", "gold_recalled"] += key == "recalled"
                split["miss", "prediction_recalled"] += pred
                split["miss", "both_recalled"] += pred and key == "recalled"
        for r, b in enumerate(rec["beam"]):
            x = priors.features(rec["source"], b["prediction"], b["logp"], top, r)
            X.append(x + (memory.features(rec["source"], b["prediction"]) if memory is not None else []))
            y.append(sorted(mols(b["prediction"])) == want)
            g.append(i)
    X, y, g = np.array(X), np.array(y), np.array(g)
    lines = np.unique(g)
    folds = np.array_split(np.random.default_rng(0).permutation(lines), 5)

    def top1(scores: np.ndarray) -> float:
        return 100 * float(np.mean([y[idx[np.argmax(scores[idx])]] for idx in (np.where(g == i)[0] for i in lines)]))

    beam_order = -np.concatenate([np.arange((g == i).sum()) for i in lines]).astype(float)
    out = {"lines": len(lines), "beam_top1": round(top1(beam_order), 2)}
    # where the gold line sits in the beam: share of lines with it in the first k, and lines without it at all
    first = [int(np.argmax(y[g == i])) if y[g == i].any() else None for i in lines]
    for k in (2, 5):
        out[f"beam_top{k}"] = round(100 * sum(r is not None and r < k for r in first) / len(lines), 2)
    out["gold_not_in_beam"] = sum(r is None for r in first)
    for c in (0.01, 0.1, 1.0):
        scores = np.zeros(len(y))
        for f in folds:
            test = np.isin(g, f)
            model = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=3000)).fit(X[~test], y[~test])
            scores[test] = model.decision_function(X[test])
        out[f"rerank_top1_C{c}"] = round(top1(scores), 2)
    for key in ("recalled", "not_recalled"):  # the beam's top-1 EM where the training lines hold the gold decision
        if split[key, "n"]:
            out[f"beam_top1_{key}"] = {"n": split[key, "n"], "EM": round(100 * split[key, "ok"] / split[key, "n"], 2)}
    if split["miss", "n"]:
        out["misses"] = {k: split["miss", k] for k in ("n", "gold_recalled", "prediction_recalled", "both_recalled")}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
