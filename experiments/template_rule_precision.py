"""How often each rule writes a chemist's-set line right: every line of the chemist's validation set (USPTO-MIT
valid reactions the benchmark's rule drops, closed with real by-products) through the rules alone, the rule's line
compared with the target as a bag of canonical molecules, stereo aside (the patent records often write none where a
rule writes the E alkene). The template rules' confidences
(``algebra/rules/template_rule.py``, ``MEASURED``) come from this table.

    python experiments/template_rule_precision.py built/chemist/smiles/src-valid.txt built/chemist/smiles/tgt-valid.txt
"""

from __future__ import annotations

import argparse
from collections import Counter

from rdkit import Chem

from gnn_chemalgebra.algebra.rules import apply_rules
from gnn_chemalgebra.chem.bag import parse_bag


def bag(line: str) -> Counter:
    out: Counter = Counter()
    for t in parse_bag(line, default_coef=1):
        mol = Chem.MolFromSmiles(t.mol)
        out[Chem.MolToSmiles(mol, isomericSmiles=False) if mol else t.mol] += t.coef
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("tgt")
    args = ap.parse_args()
    src = open(args.src, encoding="utf-8").read().splitlines()
    tgt = open(args.tgt, encoding="utf-8").read().splitlines()
    right: Counter = Counter()
    fired: Counter = Counter()
    for s, t in zip(src, tgt, strict=True):
        got = apply_rules(parse_bag(s, default_coef=1), "smiles")
        if got is None:
            continue
        fired[got.rule] += 1
        right[got.rule] += bag(".".join(str(x) for x in got.terms)) == bag(t)
    print(f"{len(src)} lines, {sum(fired.values())} written by a rule")
    print("| rule | right | written |\n|---|---:|---:|")
    for rule in sorted(fired):
        print(f"| `{rule}` | {right[rule]} | {fired[rule]} |")


if __name__ == "__main__":
    main()
