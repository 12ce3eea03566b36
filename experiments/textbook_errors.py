"""What the lines of ``gnnca bench textbook --records`` get wrong: right lines per area (organic / general) and
style, and how many wrong SMILES lines (bags and reaction SMILES, fallbacks left out) write a radical filler
molecule (``[O]``, ``[C][O]``, ``[MgH][Br]`` ...: the benchmark's leftover convention) where a chemist expects a
real by-product.

    python experiments/textbook_errors.py results/textbook/baseline_dev_records.jsonl
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections import Counter, defaultdict

from rdkit import Chem, RDLogger

from gnn_chemalgebra.chem.bag import parse_bag


def _radical(smiles: str) -> bool:
    mol = Chem.MolFromSmiles(smiles)
    return mol is not None and any(a.GetNumRadicalElectrons() for a in mol.GetAtoms())


def summary(path: str) -> dict:
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8") as fh:  # stored gzipped
        records = [json.loads(line) for line in fh]
    by_area: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    fillers = Counter()
    for r in records:
        by_area[f"{r['area']}/{r['style']}"][0] += r["right"]
        by_area[f"{r['area']}/{r['style']}"][1] += 1
        if r["style"] == "formula" or r["right"] or r["refused"] or r.get("fallback"):
            continue
        fillers["wrong"] += 1
        fillers["with_radical_filler"] += any(_radical(t.mol) for t in parse_bag(r["prediction"]))
    return {"right_by_area_style": {k: f"{a}/{n}" for k, (a, n) in sorted(by_area.items())}, **fillers}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records", nargs="+", help="--records files of gnnca bench textbook")
    RDLogger.DisableLog("rdApp.*")
    for path in ap.parse_args().records:
        print(json.dumps({"records": path, **summary(path)}))


if __name__ == "__main__":
    main()
