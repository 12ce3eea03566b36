"""EM and the first cause of every miss (roles, leftover, main product, extent) of one checkpoint on a test split:
the breakdown of `results/gnn_errors.md` for any model, the bundled ones included (no checkpoint = bundled).

    python scripts/error_breakdown.py --built built/extra --variant ChemAlgebra_F_T2_x1 --limit 500 \
        --out results/bundled_errors.jsonl

With --predictions PRED.jsonl (what `gnnca predict --json` wrote for the split's source file) the lines are not
predicted again: the breakdown is that of the user-facing run, one prediction pass per cell (JSONL=1
scripts/eval_bundled.sh writes these files).
"""

import argparse
import json
import time
from pathlib import Path

from gnn_chemalgebra.benchmark.errors import report_errors
from gnn_chemalgebra.data.dataset import load_examples
from gnn_chemalgebra.data.layout import variant_props
from gnn_chemalgebra.inference.predictor import Predictor, PredictorOptions
from gnn_chemalgebra.inference.run import default_checkpoint

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--checkpoint", help="GNN checkpoint (default: the bundled one for the variant's representation)")
ap.add_argument("--edit-checkpoint", help="SMILES: bond-edit model (default: the GNN's own pairing)")
ap.add_argument("--built", type=Path, required=True)
ap.add_argument("--variant", required=True)
ap.add_argument("--split", default="test_in")
ap.add_argument("--limit", type=int, default=0, help="first N lines only (0 = all)")
ap.add_argument(
    "--beam", type=int, default=5, help="main-product beam of the SMILES decoder (top-5 accuracy; gnnca predict: 1)"
)
ap.add_argument("--out", type=Path, help="append the record (one JSON line) to this file")
ap.add_argument("--predictions", type=Path, help="gnnca predict --json output for the split: read, not predicted")
a = ap.parse_args()

repr_ = str(variant_props(a.variant)["repr"])
ckpt = a.checkpoint or str(default_checkpoint(repr_))
examples = load_examples(a.built, a.variant, a.split, a.limit or None)
t0 = time.perf_counter()
if a.predictions:
    reports = [json.loads(line) for line in a.predictions.read_text(encoding="utf-8").splitlines() if line.strip()]
    if len(reports) != len(examples):
        raise SystemExit(f"{a.predictions}: {len(reports)} predictions for {len(examples)} lines of {a.split}")
else:
    reports = [
        p.to_json()
        for p in Predictor.from_checkpoint(ckpt, options=PredictorOptions(edit_checkpoint=a.edit_checkpoint)).predict(
            examples, batch_size=256, beam=a.beam if repr_ == "smiles" else 1
        )
    ]
seconds = time.perf_counter() - t0
counts = report_errors(examples, reports, repr_)
beam = a.beam if repr_ == "smiles" and not a.predictions else 1  # gnnca predict writes its top-1
if beam < 5:  # a top-5 count from fewer than five hypotheses would be the top-1 count again
    counts["wrong"].pop("main_top5_missed", None)
n = len(examples)
rec = {
    "checkpoint": ckpt,
    "variant": a.variant,
    "split": a.split,
    "n": n,
    "EM": round(100.0 * (n - counts["n_fail"]) / max(n, 1), 2),
    "first_cause_pct": {k: round(100.0 * v / n, 2) for k, v in counts["first_cause"].items()},
    "errors": counts,
    "beam": beam,
}
if a.predictions:  # the prediction time is gnnca predict's (eval_bundled.sh's wall_s); here only the reading
    rec.update(predictions=str(a.predictions), read_s=round(seconds, 1))
else:
    rec["predict_s"] = round(seconds, 1)
print(json.dumps(rec))
if a.out:
    a.out.parent.mkdir(parents=True, exist_ok=True)
    with open(a.out, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec) + "\n")
