"""Checks of what a written line holds (its by-products, the rings it forms, open-shell molecules), measured
on the SMILES model's kept records before any of them goes into the trust fields.

Training side (``meta-train.jsonl`` of the extra build): how many reactions write each by-product (water,
an oxygen atom ``[O]``), how many make an open-shell molecule (RDKit radical electrons), how many form a new
three-membered ring. Record side, per kept records file: the lines each candidate check marks and their exact
match (the benchmark's scorer), how many of them the current sidecar's confidence leaves at >= 0.6; and, on the
validation records only, five-fold cross-validated AUROC / EM@80 of the calibration's features with each
candidate added as a feature (never fitted on test lines).

Candidates: ``rare by-product`` (fewer than ``MIN_BYPRODUCT`` training reactions wrote it; the exact match of
the validation lines by that count, for choosing it, is printed too), ``new 3-ring`` (the main product has a
three-membered ring the consumed molecules did not), ``open shell`` (a new molecule with radical electrons),
``[O], no reductant`` (an oxygen atom written while no source molecule is a reducing agent: hydride, B-H,
Al-H, Si-H, Sn-H, H2, a metal, hydrazine, formate, a phosphine, sulfite).

    python experiments/written_line_checks.py --records runs/calibration_records --built built/full \\
        --train built/extra
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import cache
from pathlib import Path

import numpy as np

REDUCING = (
    "[H-]", "[B,Al,Si,Sn][H]", "[#1][#1]", "[Fe,Zn,Sn,Mg,Li,Na,K,Ca,Ni,Pd,Pt,Ti,Sm,In;+0]", "[NX3][NX3]",
    "[CH1](=O)[O,O-]", "[PX3]", "[S;$(S(=O)[O-]),$([S-]);!$(S(=O)(=O))]",
)  # fmt: skip


@cache
def _mol(smiles: str):  # noqa: ANN202
    from rdkit import Chem

    return Chem.MolFromSmiles(smiles)


@cache
def open_shell(smiles: str) -> bool:
    m = _mol(smiles)
    return m is not None and any(a.GetNumRadicalElectrons() for a in m.GetAtoms())


@cache
def reducing(smiles: str) -> bool:
    from rdkit import Chem

    m = _mol(smiles)
    if m is None:
        return False
    m = Chem.AddHs(m)
    return any(m.HasSubstructMatch(Chem.MolFromSmarts(s)) for s in REDUCING)


def checks(rec: dict, outcomes) -> list[float]:  # noqa: ANN001
    from gnn_chemalgebra.chem.rings import new_small_rings
    from gnn_chemalgebra.trust.outcomes import consumed, written_byproducts

    bps = written_byproducts(rec)
    main = rec.get("main_product")
    src = [m["mol"] for m in rec.get("molecules") or []]
    return [
        float(any(outcomes.byproducts.get(m, 0) < outcomes.min_byproduct for m in bps)),
        float(bool(main) and bool(new_small_rings(main, consumed(rec)))),
        float(any(open_shell(m) for m in rec.get("new_products") or [])),
        float("[O]" in bps and not any(reducing(m) for m in src)),
    ]


NAMES = ("rare by-product", "new 3-ring", "open shell", "[O], no reductant")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=Path, required=True)
    ap.add_argument("--built", type=Path, default=Path("built/full"))
    ap.add_argument("--train", type=Path, default=Path("built/extra"))
    ap.add_argument("--model", default="gnn_smiles_default")
    args = ap.parse_args(argv)
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from gnn_chemalgebra.benchmark.calibration import exact_labels
    from gnn_chemalgebra.evaluation.calibration import accuracy_at_coverage, auroc
    from gnn_chemalgebra.trust.annotate import Trust
    from gnn_chemalgebra.trust.features import record_features
    from gnn_chemalgebra.trust.outcomes import TrainingOutcomes, split_products, written_byproducts

    meta = args.train / "ChemAlgebra_S_T2_x1" / "meta-train.jsonl"
    metas = [json.loads(x) for x in meta.read_text().splitlines()]
    reactions = [[(m, int(v)) for m, v in d["nu"]] for d in metas]
    atom = [d for d in metas if any(m == "[O]" and v > 0 for m, v in d["nu"])]
    bare = sum(not any(reducing(m) for m in d["k"]) for d in atom)
    outcomes = TrainingOutcomes.from_reactions(reactions, "smiles")
    n = outcomes.reactions
    byp = [split_products([m for m, v in nu if v > 0], "smiles")[1] for nu in reactions]
    shell = sum(any(open_shell(m) for m in b) for b in byp)
    print(f"training reactions {n:,} ({meta}): {len(outcomes.byproducts)} distinct by-products; water written by "
          f"{outcomes.byproducts.get('O', 0)}, [O] by {outcomes.byproducts.get('[O]', 0):,}; an open-shell by-product "
          f"in {shell:,} ({shell / n:.1%}); a new three-membered ring in {sum(outcomes.rings.values())} "
          f"({json.dumps(outcomes.rings)}); [O] with no reducing agent in the source in {bare:,}")  # fmt: skip
    ckpt = Path("gnn_chemalgebra/checkpoints") / f"{args.model}.pt"
    trust = Trust.load_for(ckpt)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    for path in sorted(args.records.glob(f"{args.model}-S_*.jsonl")):
        variant, split = path.name.split("-")[1:3]
        recs = [json.loads(x) for x in path.read_text().splitlines()]
        tgts = (args.built / f"ChemAlgebra_{variant}" / f"tgt-{split}.txt").read_text().splitlines()[: len(recs)]
        y = np.array(exact_labels([r["prediction"] for r in recs], tgts, "smiles"), dtype=int)
        X = np.array([checks(r, outcomes) for r in recs])
        conf = trust.calibrator.confidence(recs)[0] if trust and trust.calibrator else np.zeros(len(recs))
        print(f"{path.name}: {len(recs):,} lines, EM {100 * y.mean():.2f}")
        for j, name in enumerate(NAMES):
            k = X[:, j] > 0
            em = f"{100 * y[k].mean():.1f}" if k.any() else "-"
            print(f"  {name}: {int(k.sum())} lines, EM {em}; confidence >= 0.6 on {int((conf[k] >= 0.6).sum())} "
                  f"({int(y[k & (conf >= 0.6)].sum())} of them right)")  # fmt: skip
        k = (X[:, 0] > 0) | (X[:, 1] > 0)
        print(f"  either of the first two: {int(k.sum())} lines ({100 * k.mean():.2f}%), EM {100 * y[k].mean():.1f}")
        if split != "valid":
            continue
        least = np.array([min((outcomes.byproducts.get(m, 0) for m in written_byproducts(r)), default=n) for r in recs])
        scan = [(c, least < c) for c in (1, 2, 5, 10, 20, 50)]
        print("  by-product written by fewer than c training reactions: " + "; ".join(
            f"c={c}: {int(k.sum())} lines, EM {100 * y[k].mean():.1f}" for c, k in scan if k.any()))  # fmt: skip
        base = np.array([record_features(r) for r in recs])
        for name, extra in [("calibration features", None), *[(f"+ {nm}", X[:, j]) for j, nm in enumerate(NAMES)]]:
            Z = base if extra is None else np.c_[base, extra]
            model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
            p = cross_val_predict(model, Z, y, cv=cv, method="predict_proba")[:, 1]
            print(f"  five-fold {name}: AUROC {auroc(p, y):.4f}, EM@80 {100 * accuracy_at_coverage(p, y, 0.8):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
