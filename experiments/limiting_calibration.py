"""How far the calibration, fitted on Type-2 lines written with the benchmark's Bayes extent, is from calibrated
for Type-2 lines written with ``--extent limiting`` (a chemist's amounts, the default for stdin and the Python
API), which ``gnnca predict`` therefore marks ``calibrated: false``.

Under ``limiting`` the benchmark's own target is the wrong yardstick (its extent follows the Bayes rule, not the
amounts), so each validation line's gold reaction (``nu`` in ``meta-valid.jsonl``) is written again with the
limiting extent of the line's amounts, as the decoder writes a line (``inference/decode.py``: per-term roles, then
``source + xi * nu``), and the bundled model's limiting line is compared with that. The rebuild is checked first:
the gold reaction with the meta's own extent must give the benchmark's target line back.

    python experiments/limiting_calibration.py --built built/full --variant F_T2_x1
    python experiments/limiting_calibration.py --built built/full --variant S_T2_x1
    python experiments/limiting_calibration.py --variant F_T2_x1 --split test_in --limit 3000 [--checkpoint CK]

(``gnnca bench calibration`` now fits a model of its own for these lines on the same yardstick, from the
validation lines; the test split measures it.)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--built", type=Path, default=Path("built/full"))
    ap.add_argument("--variant", default="F_T2_x1", help="a Type-2 variant, e.g. F_T2_x1 or S_T2_x1")
    ap.add_argument("--split", default="valid")
    ap.add_argument("--limit", type=int, default=0, help="first N lines only (0 = all)")
    ap.add_argument("--checkpoint", help="another checkpoint (default: the bundled model)")
    args = ap.parse_args(argv)
    from gnn_chemalgebra.benchmark.calibration import limiting_targets
    from gnn_chemalgebra.evaluation.calibration import accuracy_at_coverage, auroc, expected_calibration_error
    from gnn_chemalgebra.evaluation.metrics import parse_prediction, parse_reference, score_pair

    repr = "smiles" if args.variant.startswith("S") else "formula"
    d = args.built / f"ChemAlgebra_{args.variant}"
    n = args.limit or None
    src = (d / f"src-{args.split}.txt").read_text(encoding="utf-8").splitlines()[:n]
    tgt = (d / f"tgt-{args.split}.txt").read_text(encoding="utf-8").splitlines()[:n]
    meta = d / f"meta-{args.split}.jsonl"
    gold = limiting_targets(src, meta, repr)
    own = limiting_targets(src, meta, repr, own_extent=True)
    back = sum(score_pair(o, parse_reference(t, repr)).em for o, t in zip(own, tgt, strict=True))
    print(f"{args.variant} {args.split}: {len(src):,} lines; the gold reaction with its own extent rebuilds {back:,}")
    with tempfile.TemporaryDirectory() as tmp:
        lines = Path(tmp) / "src.txt"
        lines.write_text("\n".join(src) + "\n", encoding="utf-8")
        cmd = ["gnnca", "predict", str(lines), "--line-type", "2", "--extent", "limiting", "--json"]
        cmd += ["--checkpoint", args.checkpoint] if args.checkpoint else []
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    recs = [json.loads(x) for x in out.splitlines()]
    y = np.array(
        [score_pair(parse_prediction(r["prediction"], repr).terms, g).em for r, g in zip(recs, gold, strict=True)],
        dtype=int,
    )
    p = np.array([r["confidence"] for r in recs])
    calibrated = sum(bool(r.get("calibrated")) for r in recs)
    print(f"limiting lines right (the gold reaction at the limiting extent): {100 * y.mean():.2f}%; "
          f"calibrated: true on {calibrated:,}; mean confidence "
          f"{100 * p.mean():.2f}%; ECE {100 * expected_calibration_error(p, y):.1f}%, AUROC {auroc(p, y):.3f}, "
          f"EM@80 {100 * accuracy_at_coverage(p, y, 0.8):.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
