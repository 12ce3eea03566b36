"""Benchmark outputs of the bundled models before and after their weights were stored compactly (float16 weight
matrices, cast back to float32 on load): EM of each, how many written lines changed, and how far the calibrated
confidence and the in-domain flag moved, from two folders of predictions made with the same commands.

Each folder holds, for every set NAME (f1: first 3,000 F_T1_x1 test_in lines; s1: first 1,000 S_T1_x1 test_in;
f2: first 500 F_T2_x1 test_in), NAME.pred (plain text) and NAME.json (``--json``), made by

    gnnca predict NAME.src --extent bayes [--line-type 2 for f2] > DIR/NAME.pred
    gnnca predict NAME.src --extent bayes [--line-type 2 for f2] --json > DIR/NAME.json

with the float32 checkpoints (restored from the history: experiments/checkpoints.md) and with the compact ones:

    python experiments/compact_weights.py --before BEFORE --after AFTER --targets TGT_DIR \
        --out results/compact_weights.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from gnn_chemalgebra.evaluation.metrics import evaluate_files
from gnn_chemalgebra.io import atomic_write_json

SETS = {  # name: (variant, lines, repr, predict flags)
    "f1": ("ChemAlgebra_F_T1_x1", 3000, "formula", ""),
    "s1": ("ChemAlgebra_S_T1_x1", 1000, "smiles", ""),
    "f2": ("ChemAlgebra_F_T2_x1", 500, "formula", "--line-type 2"),
}


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def compare_set(name: str, before: Path, after: Path, tgt: Path) -> dict[str, Any]:
    """The figures of one set: EM before and after, lines changed (text and JSON), confidence and in-domain moves."""
    variant, n, repr, flags = SETS[name]
    em = {
        side: evaluate_files(d / f"{name}.pred", tgt, repr)["EM"] for side, d in (("before", before), ("after", after))
    }
    text_b = (before / f"{name}.pred").read_text(encoding="utf-8").splitlines()
    text_a = (after / f"{name}.pred").read_text(encoding="utf-8").splitlines()
    rec_b, rec_a = _records(before / f"{name}.json"), _records(after / f"{name}.json")
    if not (len(text_b) == len(text_a) == len(rec_b) == len(rec_a) == n):
        raise SystemExit(f"{name}: expected {n} lines in each file")
    conf = [abs((b.get("confidence") or 0.0) - (a.get("confidence") or 0.0)) for b, a in zip(rec_b, rec_a, strict=True)]
    return {
        "variant": variant,
        "split": "test_in",
        "lines": n,
        "predict_flags": f"--extent bayes {flags}".strip(),
        "EM_before": em["before"],
        "EM_after": em["after"],
        "EM_change": round(em["after"] - em["before"], 4),
        "text_lines_changed": sum(b != a for b, a in zip(text_b, text_a, strict=True)),
        "json_predictions_changed": sum(
            b.get("prediction") != a.get("prediction") for b, a in zip(rec_b, rec_a, strict=True)
        ),
        "max_abs_confidence_change": round(max(conf), 4),
        "mean_abs_confidence_change": round(sum(conf) / n, 6),
        "in_domain_changed": sum(b.get("in_domain") != a.get("in_domain") for b, a in zip(rec_b, rec_a, strict=True)),
        "calibrated_after": sum(bool(a.get("calibrated")) for a in rec_a),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, required=True, help="Predictions of the float32 checkpoints.")
    ap.add_argument("--after", type=Path, required=True, help="Predictions of the compact checkpoints.")
    ap.add_argument("--targets", type=Path, required=True, help="Folder with NAME.tgt (the first N target lines).")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--note", action="append", default=[], help="KEY=VALUE kept in the record (repeatable).")
    args = ap.parse_args()
    sets = {name: compare_set(name, args.before, args.after, args.targets / f"{name}.tgt") for name in SETS}
    record = {
        "what": "bundled models, float32 vs compact (float16 weight matrices cast back to float32 on load)",
        "data": "built/full (gnnca data build --out built/full), first N lines of each test_in file",
        "sets": sets,
        "max_abs_EM_change": max(abs(s["EM_change"]) for s in sets.values()),
        **dict(kv.split("=", 1) for kv in args.note),
    }
    atomic_write_json(args.out, record)
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
