"""Which features rank right above wrong lines: five-fold cross-validation on VALIDATION records only. It
reads the validation records ``gnnca bench calibration --records DIR`` kept (beam 5), labels them against
``tgt-valid.txt``, and compares the calibration's features (``trust/features.py``) with candidates left out of it:
the beam's margin (score of the written line minus the next distinct one), the training lines' memory of each
consumed molecule (how often it was consumed, and with which by-products), the nearest training reactant set's
similarity, and a gradient-boosted model in place of the logistic one. Prints cross-validated AUROC and EM of the
80% most confident lines per line type.

    python experiments/calibration_features.py --records runs/calibration_records --built built/full --model gnn_default
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np


def _memory(meta: Path) -> tuple[Counter, Counter, dict[str, Counter]]:
    consumed, seen, left = Counter(), Counter(), {}
    for line in meta.read_text().splitlines():
        d = json.loads(line)
        nu = dict((m, v) for m, v in d["nu"])
        made = [m for m, v in d["nu"] if v > 0]
        for m in d["k"]:
            if nu.get(m, 0) <= 0:
                seen[m] += 1
            if nu.get(m, 0) < 0:
                consumed[m] += 1
                left.setdefault(m, Counter())[tuple(sorted(made[1:]))] += 1
    return consumed, seen, left


def _extra(rec: dict, mem: tuple, dom) -> list[float]:  # noqa: ANN001
    from gnn_chemalgebra.trust.domain import reactant_set

    consumed, seen, left = mem
    cons = [m["mol"] for m in rec["molecules"] if m["nu"] < 0]
    role = [math.log((consumed[m] + 0.5) / (seen[m] + 1)) for m in cons] or [0.0]
    made = tuple(sorted(p for p in rec["new_products"] if p != rec["main_product"]))
    agree = [(left[m][made] + 0.5) / (sum(left[m].values()) + 1) for m in cons if m in left] or [0.5]
    beam = [e["logp"] for e in rec["beam"] if e["logp"] is not None]
    margin = beam[0] - beam[1] if len(beam) > 1 else 30.0
    sim = dom.nearest(dom_fp(dom, reactant_set(rec)))
    return [min(role), math.log(min(agree)), math.log(max(margin, 0.0) + 1e-3), sim]


def dom_fp(dom, mols):  # noqa: ANN001, ANN201
    from gnn_chemalgebra.trust.domain import set_fingerprint

    return set_fingerprint(mols, dom.repr, dom.nbits)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=Path, required=True)
    ap.add_argument("--built", type=Path, default=Path("built/full"))
    ap.add_argument("--model", default="gnn_default", help="record prefix: gnn_default or gnn_smiles_default")
    args = ap.parse_args(argv)
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from gnn_chemalgebra.benchmark.calibration import exact_labels
    from gnn_chemalgebra.evaluation.calibration import accuracy_at_coverage, auroc
    from gnn_chemalgebra.trust.domain import DomainIndex
    from gnn_chemalgebra.trust.features import record_features
    from gnn_chemalgebra.trust.fit import training_reactions

    r = "S" if "smiles" in args.model else "F"
    repr = "smiles" if r == "S" else "formula"
    meta = args.built / f"ChemAlgebra_{r}_T2_x1" / "meta-train.jsonl"
    mem = _memory(meta)
    sets, mols = training_reactions([meta])
    dom = DomainIndex.build(sets, mols, repr)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    for lt in (1, 2):
        variant = f"{r}_T{lt}_x1"
        path = next(args.records.glob(f"{args.model}-{variant}-valid-lt{lt}-b5-n*.jsonl"))
        recs = [json.loads(x) for x in path.read_text().splitlines()]
        tgts = (args.built / f"ChemAlgebra_{variant}" / "tgt-valid.txt").read_text().splitlines()
        y = np.array(exact_labels([x["prediction"] for x in recs], tgts, repr), dtype=int)
        base = np.array([record_features(x) for x in recs])
        extra = np.array([_extra(x, mem, dom) for x in recs])
        rows = {
            "calibration features (logistic)": base,
            "+ role memory": np.c_[base, extra[:, 0]],
            "+ leftover memory": np.c_[base, extra[:, 1]],
            "+ beam margin": np.c_[base, extra[:, 2]],
            "+ nearest similarity": np.c_[base, extra[:, 3]],
            "+ all four": np.c_[base, extra],
        }
        for name, X in rows.items():
            p = cross_val_predict(make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000)), X, y, cv=cv,
                                  method="predict_proba")[:, 1]  # fmt: skip
            print(f"{variant} valid ({len(y)} lines) {name}: AUROC {auroc(p, y):.4f}, EM@80 "
                  f"{100 * accuracy_at_coverage(p, y, 0.8):.2f}")  # fmt: skip
        gb = HistGradientBoostingClassifier(max_iter=150, learning_rate=0.05, max_leaf_nodes=6, min_samples_leaf=30)
        p = cross_val_predict(gb, np.c_[base, extra], y, cv=cv, method="predict_proba")[:, 1]
        print(f"{variant} valid ({len(y)} lines) + all four, gradient boosting: AUROC {auroc(p, y):.4f}, EM@80 "
              f"{100 * accuracy_at_coverage(p, y, 0.8):.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
