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
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np


def limiting_gold(source: str, meta: dict, repr: str) -> tuple[list, list]:
    """The gold reaction written with its own extent and with the limiting extent of the source's amounts."""
    from gnn_chemalgebra.algebra.extent import group_terms, limiting_extent, term_roles
    from gnn_chemalgebra.chem.bag import bag_totals
    from gnn_chemalgebra.errors import ChemAlgebraError
    from gnn_chemalgebra.evaluation.metrics import parse_prediction
    from gnn_chemalgebra.inference.decode import apply_extent

    terms = parse_prediction(source, repr).terms
    mols = {t.mol for t in terms}
    full = {m: int(v) for m, v in meta["nu"]}
    present = {m: v for m, v in full.items() if m in mols}
    new = [(m, v) for m, v in full.items() if m not in mols and v > 0]
    roles = term_roles(terms, full, 2, group_terms(terms))
    own = apply_extent(terms, present, new, int(meta["xi"]), roles)
    try:
        xi = limiting_extent(bag_totals(terms), full)
    except ChemAlgebraError:  # the gold reaction consumes nothing: its own extent
        xi = int(meta["xi"])
    return own, apply_extent(terms, present, new, xi, roles)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--built", type=Path, default=Path("built/full"))
    ap.add_argument("--variant", default="F_T2_x1", help="a Type-2 variant, e.g. F_T2_x1 or S_T2_x1")
    args = ap.parse_args(argv)
    from gnn_chemalgebra.evaluation.calibration import accuracy_at_coverage, auroc, expected_calibration_error
    from gnn_chemalgebra.evaluation.metrics import parse_prediction, parse_reference, score_pair

    repr = "smiles" if args.variant.startswith("S") else "formula"
    d = args.built / f"ChemAlgebra_{args.variant}"
    src = (d / "src-valid.txt").read_text(encoding="utf-8").splitlines()
    tgt = (d / "tgt-valid.txt").read_text(encoding="utf-8").splitlines()
    meta = [json.loads(x) for x in (d / "meta-valid.jsonl").read_text(encoding="utf-8").splitlines()]
    gold = [limiting_gold(s, m, repr) for s, m in zip(src, meta, strict=True)]
    back = sum(score_pair(own, parse_reference(t, repr)).em for (own, _), t in zip(gold, tgt, strict=True))
    print(f"{args.variant} valid: {len(src):,} lines; the gold reaction with its own extent rebuilds {back:,} targets")
    cmd = ["gnnca", "predict", str(d / "src-valid.txt"), "--line-type", "2", "--extent", "limiting", "--json"]
    recs = [json.loads(x) for x in subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()]
    y = np.array(
        [score_pair(parse_prediction(r["prediction"], repr).terms, g).em for r, (_, g) in zip(recs, gold, strict=True)],
        dtype=int,
    )
    p = np.array([r["confidence"] for r in recs])
    print(f"limiting lines right (the gold reaction at the limiting extent): {100 * y.mean():.2f}%; mean confidence "
          f"{100 * p.mean():.2f}%; ECE {100 * expected_calibration_error(p, y):.1f}%, AUROC {auroc(p, y):.3f}, "
          f"EM@80 {100 * accuracy_at_coverage(p, y, 0.8):.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
