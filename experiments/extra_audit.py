"""Audit of a ``gnnca data build --extra`` folder, independent of the numbers the builder wrote: no extra training
reaction has a USPTO-MIT valid/test product, and every valid/test file equals a local build's. Measured on the extra
build: 0 problems over 101,521 extra records (49,723 USPTO-500-MT, 51,798 USPTO-full) and the 4,873,008 training
sidecar lines drawn from them (2,436,504 SMILES-variant lines checked molecule by molecule) against 68,845 MIT
valid/test product keys; against the local build, 129 valid/test/separated files have the same sha256, the 50
variant and USPTO-BAL training text files are byte prefixes, and the ``reactions-*.jsonl`` files are equal record by
record (the training one a prefix).

    python experiments/extra_audit.py --built built/extra [--local built/full] [--workers 2]

* overlap: the MIT valid/test product keys are recomputed from the source files, and every extra training
  reaction is checked against them, both in ``uspto_bal/reactions-train.jsonl`` and as drawn in the variant
  sidecars (``meta-train*.jsonl``: the SMILES variants' nu, the formula variants through their reaction id);
* byte-identity: every valid/test file against a local build (sha256; the ``reactions-*.jsonl`` of a build made
  before the formulas order was fixed are compared record by record instead).

Exit 1 on any problem.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any

from rdkit import Chem

from gnn_chemalgebra.chem.edits import gold_products
from gnn_chemalgebra.data.build import bundled_data_dir
from gnn_chemalgebra.data.extra import mit_product_keys, product_key
from gnn_chemalgebra.data.layout import VARIANTS, split_files, variant_props
from gnn_chemalgebra.data.uspto import read_split


@lru_cache(maxsize=500_000)
def _key(smiles: str) -> str | None:
    mol = Chem.MolFromSmiles(smiles)
    return None if mol is None else product_key(mol)


def _records(built: Path, split: str) -> list[dict[str, Any]]:
    with open(built / "uspto_bal" / f"reactions-{split}.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def audit_overlap(built: Path, src_dir: Path, workers: int = 1) -> dict[str, Any]:
    """Counts of checked records and sidecar lines, and every violation found (an empty list = clean)."""
    lines: list[str] = []
    for split in ("valid", "test"):
        for raw in read_split(src_dir, split):
            lines += [raw.target, raw.mapped.split(">")[-1]]
    mit_keys = mit_product_keys(lines, workers)
    records = _records(built, "train")
    extra = {r["id"]: r for r in records if r.get("source")}
    problems: list[str] = []
    for rid, rec in extra.items():
        hits = [p for p in gold_products(rec) if _key(p) in mit_keys]
        if hits:
            problems.append(f"reactions-train.jsonl id {rid} ({rec['source']}): product {hits[0]}")
    sidecar: Counter = Counter()
    for variant in VARIANTS:
        smiles = variant_props(variant)["repr"] == "smiles"
        for split in ("train", "train_cross"):
            meta_path = split_files(built, variant, split)[2]
            if not meta_path.exists():
                continue
            with open(meta_path, encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    meta = json.loads(line)
                    rec = extra.get(meta["rxn"])
                    if rec is None:
                        continue
                    sidecar["extra_lines"] += 1
                    if not smiles:
                        continue
                    made = [m for m, k in meta["nu"] if k > 0 and m != rec["leftover_product"]]
                    hit = next((m for m in made if _key(m) in mit_keys), None)
                    if hit is not None:
                        problems.append(f"{meta_path.relative_to(built)}:{n}: product {hit}")
                    sidecar["smiles_lines_checked"] += 1
    return {
        "mit_valid_test_lines": len(lines) // 2,
        "mit_product_keys": len(mit_keys),
        "extra_records": len(extra),
        "extra_records_by_source": dict(Counter(r["source"]["set"] for r in extra.values())),
        "sidecar": dict(sidecar),
        "problems": problems,
    }


def compare_to_local(built: Path, local: Path) -> dict[str, Any]:
    """Every file of the local build against the extra build: valid/test files identical, training files a prefix.

    Training files must start with the local build's lines (the extra reactions are appended after them);
    ``reactions-*.jsonl`` of a build made before the formulas order was fixed compare record by record.
    """
    a = json.loads((local / "manifest.json").read_text())["files"]
    b = json.loads((built / "manifest.json").read_text())["files"]
    counts: Counter = Counter()
    problems = []
    for rel, info in sorted(a.items()):
        train = Path(rel).stem.endswith(("-train", "-train_cross"))
        if rel not in b:
            problems.append(f"{rel}: missing from the extra build")
        elif not train and b[rel]["sha256"] == info["sha256"]:
            counts["identical_sha256"] += 1
        elif train and not rel.startswith("uspto_bal/reactions-") and _is_prefix(local / rel, built / rel):
            counts["train_prefix_identical"] += 1
        elif rel.startswith("uspto_bal/reactions-") and _same_records(local / rel, built / rel, prefix=train):
            counts["identical_records" + ("_prefix" if train else "")] += 1
        else:
            problems.append(f"{rel}: differs from the local build")
    return {**counts, "problems": problems}


def _is_prefix(short: Path, long: Path) -> bool:
    with open(short, "rb") as a, open(long, "rb") as b:
        while block := a.read(1 << 20):
            if b.read(len(block)) != block:
                return False
    return True


def _same_records(a: Path, b: Path, *, prefix: bool) -> bool:
    with open(a, encoding="utf-8") as fa, open(b, encoding="utf-8") as fb:
        ra = [json.loads(x) for x in fa]
        rb = [json.loads(x) for x in itertools.islice(fb, len(ra) if prefix else None)]
        return ra == rb and (prefix or fb.read(1) == "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--built", type=Path, required=True)
    ap.add_argument("--local", type=Path, help="a default (local protocol) build to compare valid/test files with")
    ap.add_argument("--data", type=Path, default=bundled_data_dir())
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args()
    report = {"overlap": audit_overlap(args.built, args.data, args.workers)}
    if args.local:
        report["valid_test_vs_local"] = compare_to_local(args.built, args.local)
    problems = [p for part in report.values() for p in part["problems"]]
    for p in problems[:20]:
        print(p)
    o = report["overlap"]
    print(
        f"extra records {o['extra_records']} {o['extra_records_by_source']}, sidecar lines {o['sidecar']}, "
        f"MIT valid/test product keys {o['mit_product_keys']}: {len(problems)} problem(s)"
    )
    print("JSON " + json.dumps({k: {**v, "problems": len(v["problems"])} for k, v in report.items()}))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
