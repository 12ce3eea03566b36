"""Whether the confidence already prices lines written as one adduct: lines whose only new molecule is a single
product made of two or more consumed molecules, the shape of the formula model's wrong textbook line for an ester
from an anhydride. Per records file: exact match (the benchmark's scorer) against mean confidence, for adduct lines
and the rest, over all lines and over those with a confidence >= 0.6.

A gap between exact match and mean confidence on adduct lines would make "is an adduct" a calibration feature or an
in-domain check; no gap means the calibration already accounts for them. Records: ``gnnca predict --json`` lines
of a bundled model, named ``{variant}-{split}.jsonl`` as for ``experiments/unreduced_lines.py``::

    gnnca predict built/full/ChemAlgebra_F_T1_x1/src-valid.txt --line-type 1 --extent bayes --json \\
        > runs/trust_records/F_T1_x1-valid.jsonl
    gnnca predict built/full/ChemAlgebra_F_T1_x1/src-test_in.txt --line-type 1 --extent bayes --json \\
        > runs/trust_records/F_T1_x1-test_in.jsonl
    python experiments/adduct_lines.py --records runs/trust_records --built built/full --glob 'F_T1_x1-*' \\
        --out results/calibration/adduct_lines.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def is_adduct(rec: dict[str, Any]) -> bool:
    """One new molecule, made from two or more consumed molecules."""
    consumed = [m for m in rec.get("molecules") or [] if int(m.get("nu", 0)) < 0]
    return len(rec.get("new_products") or []) == 1 and len(consumed) >= 2


def summary(rows: list[tuple[bool, float]]) -> dict[str, Any]:
    n = len(rows)
    return {
        "lines": n,
        "EM": round(100 * sum(em for em, _ in rows) / n, 2) if n else None,
        "mean_confidence": round(100 * sum(c for _, c in rows) / n, 2) if n else None,
    }


def measure(records: Path, tgt: Path, repr: str, limit: int | None = None) -> dict[str, Any]:
    from gnn_chemalgebra.benchmark.calibration import exact_labels

    recs = [json.loads(x) for x in records.read_text(encoding="utf-8").splitlines()]
    recs = [r for r in recs if not r.get("blank") and (limit is None or int(r["line"]) <= limit)]
    gold = tgt.read_text(encoding="utf-8").splitlines()
    ems = exact_labels([r["prediction"] for r in recs], [gold[int(r["line"]) - 1] for r in recs], repr)
    kinds: dict[str, list[tuple[bool, float]]] = {"adduct": [], "other": []}
    for r, em in zip(recs, ems, strict=True):
        kinds["adduct" if is_adduct(r) else "other"].append((em, float(r["confidence"])))
    out: dict[str, Any] = {}
    for kind, rows in kinds.items():
        out[kind] = summary(rows)
        out[f"{kind}, confidence >= 0.6"] = summary([x for x in rows if x[1] >= 0.6])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=Path, required=True, help="folder of {variant}-{split}.jsonl records")
    ap.add_argument("--built", type=Path, required=True, help="built folder with the targets")
    ap.add_argument("--glob", default="*.jsonl", help="which records files (default: all)")
    ap.add_argument("--limit", type=int, help="the first N lines of each file only")
    ap.add_argument("--out", type=Path, help="write the JSON record here")
    a = ap.parse_args(argv)
    out: dict[str, Any] = {"command": "python experiments/adduct_lines.py " + " ".join(argv or sys.argv[1:])}
    print("| file | lines | EM / mean confidence | >= 0.6: lines | EM / mean confidence |")
    print("|---|---|---|---|---|")
    for f in [x for x in sorted(a.records.glob(a.glob)) if x.suffix == ".jsonl"]:
        variant, split = f.stem.rsplit("-", 1)
        repr = "smiles" if variant.startswith("S") else "formula"
        m = measure(f, a.built / f"ChemAlgebra_{variant}" / f"tgt-{split}.txt", repr, a.limit)
        out[f"{variant} {split}"] = m
        for kind in ("adduct", "other"):
            s, c = m[kind], m[f"{kind}, confidence >= 0.6"]
            print(f"| {variant} {split}, {kind} | {s['lines']:,} | {s['EM']} / {s['mean_confidence']} "
                  f"| {c['lines']:,} | {c['EM']} / {c['mean_confidence']} |")  # fmt: skip
    if a.out is not None:
        from gnn_chemalgebra.io import atomic_write_json

        atomic_write_json(a.out, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
