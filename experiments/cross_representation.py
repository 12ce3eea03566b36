"""A second opinion for formula lines, measured before it is built: read each formula as the molecule the training
reactions most often wrote with that formula, let the bundled SMILES model predict the line, and compare its
answer (as formulas) with the formula model's. A formula cannot show the anhydride of Boc2O or the boronic acid of
a Suzuki coupling; the SMILES model reading the likely molecules can, so where the two disagree the formula line
is less likely right.

Per records file (the formula model's ``gnnca predict --json`` lines, as ``experiments/reagent_byproducts.py``
makes them): how many lines map (every formula written by some training molecule), the formula model's exact match
where the two agree and where they disagree, how many lines with confidence >= 0.6 each side holds; on validation
files, five-fold cross-validated AUROC / EM@80 of the calibration's features without and with the agreement (never
fitted on test lines); and the textbook reactions' formula lines.

    python experiments/cross_representation.py --records runs/trust_records --built built/full --train built/extra
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from functools import cache
from pathlib import Path

import numpy as np


@cache
def formula_of(smiles: str) -> str | None:
    from gnn_chemalgebra.chem.molecule import smiles_to_formula
    from gnn_chemalgebra.errors import ChemAlgebraError

    try:
        return smiles_to_formula(smiles)
    except ChemAlgebraError:
        return None


def likely_molecules(meta: Path) -> dict[str, str]:
    """Each formula -> the SMILES the training reactions held most often with that formula."""
    seen: dict[str, Counter] = defaultdict(Counter)
    with open(meta, encoding="utf-8") as fh:
        for line in fh:
            for m in set(json.loads(line)["k"]):
                f = formula_of(m)
                if f:
                    seen[f][m] += 1
    return {f: c.most_common(1)[0][0] for f, c in seen.items()}


def as_smiles(source: str, likely: dict[str, str]) -> str | None:
    """The formula line written with the likely molecules (``None``: some formula no training molecule has)."""
    from gnn_chemalgebra.evaluation.metrics import parse_prediction

    terms = parse_prediction(source, "formula").terms
    if not all(t.mol in likely for t in terms):
        return None
    return ".".join(f"{{{t.coef}}}{likely[t.mol]}" for t in terms)


def formula_bag(line: str, repr: str) -> Counter:
    from gnn_chemalgebra.evaluation.metrics import parse_prediction

    out: Counter = Counter()
    for t in parse_prediction(line, repr).terms:
        out[formula_of(t.mol) if repr == "smiles" else t.mol] += t.coef
    return out


def bundled_answers(lines: list[str], line_type: str) -> list[dict]:
    """The bundled models' ``--json`` records of ``lines`` (``--extent bayes``; SMILES lines go to the SMILES model,
    formula lines to the formula pair)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "mapped.txt"
        src.write_text("\n".join(lines) + "\n", encoding="utf-8")
        cmd = ["gnnca", "predict", str(src), "--line-type", line_type, "--extent", "bayes", "--json", "--skip-invalid"]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return [json.loads(x) for x in out.stdout.splitlines()]


def agreement(recs: list[dict], likely: dict[str, str], line_type: str) -> list[bool | None]:
    """Per record: does the SMILES model, reading the likely molecules, write the same formula bag (``None``: the
    line does not map, or the SMILES model refused it)."""
    mapped = {i: s for i, r in enumerate(recs) if (s := as_smiles(r["source"], likely)) is not None}
    idx = sorted(mapped)
    answers = bundled_answers([mapped[i] for i in idx], line_type) if idx else []
    out: list[bool | None] = [None] * len(recs)
    for i, s in zip(idx, answers, strict=True):
        if s.get("prediction"):
            out[i] = formula_bag(s["prediction"], "smiles") == formula_bag(recs[i]["prediction"], "formula")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=Path, required=True, help="folder of F_<variant>-<split>.jsonl records")
    ap.add_argument("--built", type=Path, default=Path("built/full"))
    ap.add_argument("--train", type=Path, default=Path("built/extra"))
    ap.add_argument("--textbook", type=Path, default=Path("results/calibration/textbook.json"))
    args = ap.parse_args(argv)
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from gnn_chemalgebra.benchmark.calibration import exact_labels
    from gnn_chemalgebra.evaluation.calibration import accuracy_at_coverage, auroc
    from gnn_chemalgebra.trust.features import record_features

    likely = likely_molecules(args.train / "ChemAlgebra_S_T2_x1" / "meta-train.jsonl")
    print(f"{len(likely):,} formulas written by some training molecule")
    book = []
    if args.textbook.is_file():
        book = [r for r in json.loads(args.textbook.read_text())["rows"] if r["repr"] == "formula"]
        agree = agreement([{"source": r["source"], "prediction": r["prediction"]} for r in book], likely, "1")
        for r, a in zip(book, agree, strict=True):
            if not r["right"]:
                print(f"  textbook, wrong: {r['reaction']}: confidence {r['confidence']:.3f}, SMILES model agrees: {a}")
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    for path in sorted(args.records.glob("F_*.jsonl")):
        variant, split = path.stem.split("-", 1)
        recs = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        tgts = (args.built / f"ChemAlgebra_{variant}" / f"tgt-{split}.txt").read_text().splitlines()[: len(recs)]
        y = np.array(exact_labels([r["prediction"] for r in recs], tgts, "formula"), dtype=int)
        conf = np.array([r["confidence"] for r in recs])
        agree = agreement(recs, likely, "2" if "_T2_" in variant else "1")
        has = np.array([a is not None for a in agree])
        ok = np.array([bool(a) for a in agree])
        print(f"{path.name}: {len(recs):,} lines, EM {100 * y.mean():.2f}; mapped {int(has.sum()):,}")
        for name, k in (("agree", has & ok), ("disagree", has & ~ok), ("not mapped", ~has)):
            if k.any():
                loud = (conf >= 0.6) & k
                print(f"  {name}: {int(k.sum())} lines, EM {100 * y[k].mean():.1f}; confidence >= 0.6: wrong "
                      f"{int((loud & (y == 0)).sum())}, right {int((loud & (y == 1)).sum())}")  # fmt: skip
        if split != "valid":
            continue
        base = np.array([record_features(r) for r in recs])
        extra = np.c_[has & ok, has & ~ok].astype(float)
        for name, Z in (("calibration features", base), ("+ agreement", np.c_[base, extra])):
            model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
            p = cross_val_predict(model, Z, y, cv=cv, method="predict_proba")[:, 1]
            print(f"  five-fold {name}: AUROC {auroc(p, y):.4f}, EM@80 {100 * accuracy_at_coverage(p, y, 0.8):.2f}")
            if variant == "F_T1_x1" and name == "+ agreement" and book:
                fitted = model.fit(Z, y)  # on every validation line: what the textbook lines would read
                recs_b = bundled_answers([r["source"] for r in book], "1")
                agree_b = agreement(recs_b, likely, "1")
                zb = np.c_[
                    np.array([record_features(r) for r in recs_b]),
                    np.array([[a is True, a is False] for a in agree_b], dtype=float),
                ]
                for r, q in zip(book, fitted.predict_proba(zb)[:, 1], strict=True):
                    if not r["right"]:
                        now = r["confidence"]
                        print(f"    textbook, wrong: {r['reaction']}: with the agreement {q:.3f} (now {now:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
