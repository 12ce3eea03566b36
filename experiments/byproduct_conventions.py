"""What the chemist's by-product convention does to lines the benchmark's convention writes: which convention wrote
each line, which lines changed and which real by-products (water, hydrogen halides, N2, salts) replaced a leftover
chain.

The same lines predicted twice with the same model: once in the benchmark's convention (text output), once with
``--byproducts chemist --json``. Counts: which convention wrote each chemist line (the benchmark's is kept where
no real molecules close a line, with the reason); lines whose text changed; lines whose multiset of terms changed
(a reordering is no change); lines where the molecules the model consumes or makes changed beyond what leaves
(the main product and the organic reactants keep their amounts by construction, inorganic partners such as H2 may
not); and the by-products the chemist's lines write instead of the benchmark's, most common first.

    head -300 built/full/ChemAlgebra_S_T1_x1/src-test_in.txt > OUT/src-s.txt
    gnnca predict OUT/src-s.txt --extent bayes > OUT/bench-s.txt
    gnnca predict OUT/src-s.txt --extent bayes --byproducts chemist --json > OUT/chem-s.jsonl
    python experiments/byproduct_conventions.py OUT/src-s.txt OUT/bench-s.txt OUT/chem-s.jsonl --examples 5

Result, bundled models, the first 300 test_in lines of S_T1_x1 and F_T1_x1 (``--extent bayes``; the benchmark's
convention output is byte-identical to the one written before the option existed, both as the ``src-*.txt`` file
and on stdin with ``--extent bayes``):

* S_T1_x1: the chemist's convention wrote 266 lines, kept the benchmark's line on 34 (14 "O does not balance":
  reductions the benchmark writes with an ``[O]`` leftover and no reductant in the bag or one outside the
  catalogue's reach; 6 whose amounts hold less than one real reaction; the rest single halogens, metals or
  ions with no real partner). 15 lines changed (285 identical): 9 of them change the amount of an input
  molecule (the hydrogen a reduction takes, hence the extent). Written instead: water 5, N2 2, HBr 2, boric
  acid with hydroxide 1, bromide 1, H2 1.
* F_T1_x1: 263 chemist / 37 kept (16 "O does not balance", 6 amounts); 13 lines changed, each changing an input
  molecule's amount; written instead: H2O 7, NaOH 2, B(OH)3, KOH, HBr, HCl, N2, H2 one each.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

_TERM = re.compile(r"^\{(\d+)\}(.*)$")


def terms(line: str) -> Counter:
    """A bag line as a multiset of (coefficient, molecule) terms."""
    out: Counter = Counter()
    for part in line.split("."):
        m = _TERM.match(part)
        if m:
            out[(int(m.group(1)), m.group(2))] += 1
    return out


def totals(line: str) -> Counter:
    """A bag line as total amounts per molecule."""
    out: Counter = Counter()
    for (k, mol), n in terms(line).items():
        out[mol] += k * n
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", type=Path, help="the input lines")
    ap.add_argument("benchmark", type=Path, help="gnnca predict text output, benchmark convention")
    ap.add_argument("chemist", type=Path, help="gnnca predict --byproducts chemist --json output")
    ap.add_argument("--examples", type=int, default=0, help="print this many changed lines")
    args = ap.parse_args()
    src = args.source.read_text().splitlines()
    bench = args.benchmark.read_text().splitlines()
    recs = [json.loads(x) for x in args.chemist.read_text().splitlines() if x.strip()]
    n = len(recs)
    conv = Counter(r.get("byproduct_convention") for r in recs)
    reasons = Counter(re.sub(r"\(.*", "", (r.get("byproduct_note") or "").split("written (", 1)[-1]).strip()
                      for r in recs if r.get("byproduct_note"))  # fmt: skip
    text = [i for i, r in enumerate(recs) if r["prediction"] != bench[i]]
    bag = [i for i in text if terms(recs[i]["prediction"]) != terms(bench[i])]
    left_b: Counter = Counter()
    left_c: Counter = Counter()
    amounts = 0
    for i in bag:
        b, c, s = totals(bench[i]), totals(recs[i]["prediction"]), totals(src[i])
        for mol in set(b) | set(c):
            if mol not in s:  # made: by-products (and the main product, the same on both sides)
                if b[mol] != c[mol]:
                    left_b[mol] += b[mol] > c[mol]
                    left_c[mol] += c[mol] > b[mol]
        amounts += any(b[m] != c[m] for m in s)
    print(f"lines: {n}")
    print(f"convention of the chemist's lines: {dict(conv)}")
    print(f"kept the benchmark's line, by reason: {dict(reasons)}")
    print(f"text changed: {len(text)}; terms changed (not only their order or merging): {len(bag)}")
    print(f"of those, amounts of an input molecule changed (an inorganic partner or the extent): {amounts}")
    # by-products, and the main product where the extent changed
    print(f"made in larger amounts by the benchmark's line: {(+left_b).most_common(8)}")
    print(f"made in larger amounts by the chemist's line: {(+left_c).most_common(8)}")
    for i in bag[: args.examples]:
        print(f"\n{src[i]}\n  benchmark {bench[i]}\n  chemist   {recs[i]['prediction']}")


if __name__ == "__main__":
    main()
