"""Bundled models on the chemist's-convention test set: exact match (``gnnca evaluate``) and main product right, the
figures that show how far the models trained on the benchmark's convention are from reactions as a chemist writes them.

The set (``gnnca data chemist``) holds the USPTO-MIT test reactions the benchmark's leftover rule drops, balanced with
real by-products, as Type-1 lines. Predictions come from ``gnnca predict`` with the benchmark's settings; this script
scores them: the evaluator's EM/JAC/F1 (paper mode), *main product right* (every recorded MIT product is in the
written line with its coefficient, whatever else is written), and the lines written as their source (the
predictor's fallbacks, which it counts on stderr, and lines the model reads as no reaction).

    gnnca data chemist built/full --out built/chemist
    gnnca predict built/chemist/smiles/src-test.txt --extent bayes --line-type 1 --repr smiles --quiet \
        --skip-invalid > pred/pred-smiles-test.txt        # the same with formula
    python experiments/chemist_baseline.py --chemist built/chemist --pred-dir pred \
        --out results/chemist/baseline.json [--markdown]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REPRS = ("smiles", "formula")


def main_product_right(pred_line: str, meta: dict[str, Any], repr: str) -> bool:
    """Every recorded main product of the line is written with its coefficient (paper-mode molecule keys)."""
    from gnn_chemalgebra.evaluation.metrics import molecule_key, parse_prediction

    written: dict[str, int] = {}
    for t in parse_prediction(pred_line, repr).terms:  # type: ignore[arg-type]
        written[t.mol] = written.get(t.mol, 0) + t.coef
    for mol, coef in meta["main_products"]:
        key = molecule_key(mol, repr, "paper")  # type: ignore[arg-type]
        if key is None or written.get(key) != coef:
            return False
    return True


def score(chemist: Path, pred_dir: Path, split: str = "test") -> dict[str, Any]:
    """Per representation: the evaluator's record plus main product right and the lines written unchanged."""
    from gnn_chemalgebra.evaluation.metrics import evaluate_lines

    out: dict[str, Any] = {}
    for repr in REPRS:
        pred = pred_dir / f"pred-{repr}-{split}.txt"
        if not pred.exists():
            continue
        preds = pred.read_text(encoding="utf-8").splitlines()
        n = len(preds)
        src = (chemist / repr / f"src-{split}.txt").read_text(encoding="utf-8").splitlines()[:n]
        tgt = (chemist / repr / f"tgt-{split}.txt").read_text(encoding="utf-8").splitlines()[:n]
        metas = [json.loads(x) for x in (chemist / repr / f"meta-{split}.jsonl").read_text().splitlines()[:n]]
        rec = evaluate_lines(preds, tgt, repr, "paper", src_lines=src, pred_path=str(pred))  # type: ignore[arg-type]
        main = sum(main_product_right(p, m, repr) for p, m in zip(preds, metas, strict=True))
        rec["main_product_right"] = round(100.0 * main / n, 2) if n else 0.0
        rec["unchanged_lines"] = sum(p.strip() == s.strip() for p, s in zip(preds, src, strict=True))
        rec["lines"] = n
        out[repr] = rec
    return out


def markdown(result: dict[str, Any]) -> str:
    rows = [
        "| test lines | repr | EM | main product right | JAC | F1 | written unchanged |",
        "|---|---|---|---|---|---|---|",
    ]
    for repr, r in result["scores"].items():
        rows.append(
            f"| {r['lines']:,} | {repr} | {r['EM']:.2f} | {r['main_product_right']:.2f} | {r['JAC']:.2f} | "
            f"{r['F1']:.2f} | {r['unchanged_lines']:,} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chemist", type=Path, required=True, help="folder written by gnnca data chemist")
    ap.add_argument("--pred-dir", type=Path, required=True, help="folder with pred-{smiles,formula}-test.txt")
    ap.add_argument("--out", type=Path, help="write the record (JSON) here")
    ap.add_argument("--commands", type=Path, help="text file with the commands that made the predictions")
    ap.add_argument("--markdown", action="store_true", help="print the table")
    args = ap.parse_args(argv)
    manifest = json.loads((args.chemist / "manifest.json").read_text())
    result = {
        "set": {
            "tool": manifest["tool"],
            "counts": manifest["counts"]["test"],
            "seed": manifest["seed"],
            "files": {k: v for k, v in manifest["files"].items() if k.endswith("-test.txt")},  # the lines scored
        },
        "scores": score(args.chemist, args.pred_dir),
        "commands": args.commands.read_text().splitlines() if args.commands else [],
    }
    if args.out:
        from gnn_chemalgebra.io import atomic_write_json

        atomic_write_json(args.out, result)
    print(markdown(result) if args.markdown else json.dumps(result["scores"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
