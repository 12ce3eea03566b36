"""Audit of a ``gnnca data build --extra`` folder, independent of the numbers the builder wrote.

* overlap: the MIT valid/test product keys are recomputed from the source files, and every extra training
  reaction is checked against them, both in ``uspto_bal/reactions-train.jsonl`` and as drawn in the variant
  sidecars (``meta-train*.jsonl``: the SMILES variants' nu, the formula variants through their reaction id);
* byte-identity: every valid/test file against a local build (sha256; the ``reactions-*.jsonl`` of a build made
  before the formulas order was fixed are compared record by record instead).
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any

from rdkit import Chem

from ..chem.edits import gold_products
from .extra import mit_product_keys, product_key
from .layout import VARIANTS, split_files, variant_props
from .uspto import read_split


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
