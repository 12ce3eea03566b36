"""Score one trained GNN with the decoder's options switched on and off, side by side on the same lines.

Options: ``evidence`` (Type 2: weigh role hypotheses by the generator's exact likelihood of the written
coefficients) and ``valence`` (formula: a neutral main-product remainder must admit a closed-shell molecule).
Each row scores the same lines with both off, each one alone, and both on.

Example::

    python scripts/decode_ablation.py --checkpoint runs/bench/F_T2_x1/gnn_std/best.pt --built built/full \\
        --variant ChemAlgebra_F_T2_x1 --settings valid,test_in,test_out --limit 2000
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import torch

from gnn_chemalgebra.data.dataset import load_examples
from gnn_chemalgebra.evaluation.metrics import evaluate_lines
from gnn_chemalgebra.inference.predictor import Predictor


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--built", default="built/full")
    ap.add_argument("--variant", required=True)
    ap.add_argument("--settings", default="valid,test_in,test_out")
    ap.add_argument("--limit", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", default="", help="also write the rows here")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    pred = Predictor.from_checkpoint(args.checkpoint)
    repr_ = pred.repr
    rows = []
    combos = {"off": (False, False), "+valence": (False, True), "+evidence": (True, False), "both": (True, True)}
    print("| setting | n | " + " | ".join(f"EM {c}" for c in combos) + " | both - off |")
    print("|---|---|" + "---|" * (len(combos) + 1))
    for setting in args.settings.split(","):
        exs = load_examples(args.built, args.variant, setting, args.limit or None)
        tgts = [ex.tgt or "" for ex in exs]
        row: dict[str, object] = {"setting": setting, "n": len(exs)}
        for name, (ev, val) in combos.items():
            pred.role_evidence, pred.valence_check = ev, val
            t0 = time.perf_counter()
            lines = [r["prediction"] for r in pred.predict(exs, batch_size=256)]
            row[f"EM {name}"] = round(float(evaluate_lines(lines, tgts, repr_)["EM"]), 2)
            row[f"s {name}"] = round(time.perf_counter() - t0, 1)
        rows.append(row)
        ems = [float(row[f"EM {c}"]) for c in combos]  # type: ignore[arg-type]
        print(f"| {setting} | {len(exs)} | " + " | ".join(f"{e:.2f}" for e in ems) + f" | {ems[-1] - ems[0]:+.2f} |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"checkpoint": args.checkpoint, "variant": args.variant, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
