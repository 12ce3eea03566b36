"""Type-2 calibrators compared on validation lines only, by K-fold cross-validation of the whole fit: for each
fold, the Type-2 model is fitted (by ``trust.fit.fit_calibrator``, the calibrator named) on the other folds of the
in-distribution and shifted validation lines together (``valid`` and ``valid_out``, as ``gnnca bench calibration
--shifted`` fits them) and scores the held-out fold. ECE (10 bins) and AUROC of the held-out confidence on
``valid``, ``valid_scaffold`` (the valid lines whose main product's scaffold no training product has) and
``valid_out`` (coefficients 6-10). The records are those ``gnnca bench calibration --records DIR`` keeps:

    python experiments/shift_split.py --built built/full --data data --out runs/shift
    gnnca bench calibration --checkpoint gnn_chemalgebra/checkpoints/gnn_default.pt --keep-index \\
        --shifted runs/shift --shifted-splits valid_out --test T1_x1 --limit 5 --records runs/calibration_records
    python experiments/type2_calibrators.py --records runs/calibration_records --shifted runs/shift \\
        --variant F_T2_x1 --tag gnn_default --calibrator linear --calibrator isotonic

``--feature beam_entropy`` (or ``beam_margin``) adds a candidate feature to the registry first (every fit of the
run reads it). ``--test NAME=RECORDS`` scores, after the validation folds, a model fitted on all the validation
lines on test records (``gnnca predict --json`` output; ``test_in`` / ``test_out`` in NAME picks the target
file; ``test_scaffold`` keeps the test_in records of the scaffold split).

``--oracle`` adds, per set, what ranking any confidence could reach when the extent is the only thing left
unknown: an oracle that knows whether the written roles are right (the target is the written roles at one of the
extents of the posterior) and states the extent posterior's share of the written extent when they are, 0 when
they are not. Its expected AUROC (outcomes drawn from those probabilities) bounds from above the AUROC of any
confidence read from the input, whose information is less; its realised AUROC and ECE say whether the
posterior itself is calibrated.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def read_records(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _beam_logps(rec: dict) -> np.ndarray:
    lp = [float(e["logp"]) for e in rec.get("beam") or [] if e.get("logp") is not None][:5]
    return np.array(lp or [0.0])


def beam_entropy(w) -> float:
    """Entropy of the beam's (top 5) renormalised probabilities."""
    lp = _beam_logps(w.record)
    p = np.exp(lp - lp.max())
    p /= p.sum()
    return float(-(p * np.log(p + 1e-12)).sum())


def beam_margin(w) -> float:
    """Log-probability margin of the beam's first entry over its second (30 for a beam of one)."""
    lp = _beam_logps(w.record)
    return float(min(lp[0] - lp[1], 30.0)) if len(lp) > 1 else 30.0


CANDIDATES = {"beam_entropy": beam_entropy, "beam_margin": beam_margin}


def expected_auroc(q: np.ndarray) -> float:
    """The AUROC expected when each line is right with probability ``q`` (ties count one half)."""
    vals, inv = np.unique(q, return_inverse=True)
    pos = np.bincount(inv, weights=q)
    neg = np.bincount(inv, weights=1 - q)
    below = np.cumsum(neg) - neg
    return float(((pos * below).sum() + 0.5 * (pos * neg).sum()) / (pos.sum() * neg.sum()))


def oracle(records: list[dict], y: np.ndarray, targets: list[str], repr: str) -> dict:
    """The extent-only oracle of ``--oracle`` on records and their targets."""
    from gnn_chemalgebra.benchmark.calibration import exact_labels
    from gnn_chemalgebra.evaluation.calibration import auroc, expected_calibration_error
    from gnn_chemalgebra.trust.extents import _change, line_at

    q = np.zeros(len(records))
    roles_right = np.zeros(len(records), dtype=bool)
    for i, (r, t) in enumerate(zip(records, targets, strict=True)):
        ok = bool(y[i])
        got = None if ok or r.get("fallback") else _change(r)
        if got is not None:
            lines = [x for x in (line_at(*got, int(c)) for c in r.get("extent_candidates") or []) if x]
            ok = bool(lines) and any(exact_labels(lines, [t] * len(lines), repr))
        roles_right[i] = ok
        q[i] = max(r.get("extent_posterior") or [1.0]) if ok else 0.0
    return {
        "roles_right": round(float(roles_right.mean()), 4),
        "expected_AUROC": round(expected_auroc(q), 4),
        "AUROC": round(auroc(q, y), 4),
        "ECE": round(expected_calibration_error(q, y), 4),
    }


def capped(records: list[dict], p: np.ndarray) -> np.ndarray:
    """As annotate does: a line where nothing happens (or a fallback) stays at its own evidence."""
    p = p.copy()
    for i, r in enumerate(records):
        if r.get("extent") == 0 or r.get("fallback"):
            raw = 0.0 if r.get("fallback") else float(r.get("raw_confidence", r.get("confidence")) or 0.0)
            p[i] = min(p[i], raw)
    return p


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=Path, required=True, help="gnnca bench calibration --records folder")
    ap.add_argument("--shifted", type=Path, required=True, help="experiments/shift_split.py output")
    ap.add_argument("--built", type=Path, default=Path("built/full"))
    ap.add_argument("--variant", required=True, help="F_T2_x1 or S_T2_x1")
    ap.add_argument("--tag", required=True, help="the checkpoint's stem (gnn_default, gnn_smiles_default)")
    ap.add_argument("--calibrator", action="append", default=[], help="calibrator names (trust.calibrators)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--feature", action="append", default=[], choices=sorted(CANDIDATES))
    ap.add_argument("--test", action="append", default=[], help="NAME=RECORDS (test_in, test_scaffold, test_out)")
    ap.add_argument("--oracle", action="store_true", help="the extent-only oracle's AUROC per set")
    args = ap.parse_args(argv)
    from gnn_chemalgebra.benchmark.calibration import exact_labels
    from gnn_chemalgebra.evaluation.calibration import auroc, expected_calibration_error
    from gnn_chemalgebra.trust.calibrators import TYPE2
    from gnn_chemalgebra.trust.features import RECORD_FEATURES
    from gnn_chemalgebra.trust.fit import fit_calibrator

    for f in args.feature:
        RECORD_FEATURES.add(f, CANDIDATES[f])

    repr = "smiles" if args.variant.startswith("S_") else "formula"
    so = "-so" if repr == "formula" else ""
    name = f"ChemAlgebra_{args.variant}"
    parts = {}
    for split, folder in (("valid", args.built), ("valid_out", args.shifted)):
        recs = read_records(args.records / f"{args.tag}-{args.variant}-{split}-lt2-b5-n1319{so}.jsonl")
        tgt = (folder / name / f"tgt-{split}.txt").read_text(encoding="utf-8").splitlines()
        parts[split] = (recs, np.array(exact_labels([r["prediction"] for r in recs], tgt, repr), dtype=int))
    scaffold = {json.loads(x)["rxn"] for x in (args.shifted / name / "meta-valid_scaffold.jsonl").open()}
    rxn = [json.loads(x)["rxn"] for x in (args.built / name / "meta-valid.jsonl").open()]
    records = parts["valid"][0] + parts["valid_out"][0]
    y = np.concatenate([parts["valid"][1], parts["valid_out"][1]])
    n_in = len(parts["valid"][0])
    groups = {
        "valid": np.arange(n_in),
        "valid_scaffold": np.array([i for i in range(n_in) if rxn[i] in scaffold]),
        "valid_out": np.arange(n_in, len(records)),
    }
    fold = np.random.default_rng(args.seed).integers(0, args.folds, len(records))
    out = {"variant": args.variant, "folds": args.folds, "features_added": args.feature}
    out["lines"] = {g: len(ix) for g, ix in groups.items()}
    tests = {}
    for spec in args.test:
        tname, path = spec.split("=", 1)
        recs = read_records(Path(path))
        split = "test_out" if "test_out" in tname else "test_in"
        tgt = (args.built / name / f"tgt-{split}.txt").read_text(encoding="utf-8").splitlines()
        if "scaffold" in tname:
            keep = {json.loads(x)["rxn"] for x in (args.shifted / name / "meta-test_scaffold.jsonl").open()}
            trx = [json.loads(x)["rxn"] for x in (args.built / name / f"meta-{split}.jsonl").open()]
            recs = [r for r in recs if trx[r["line"] - 1] in keep]
        tl = [tgt[r["line"] - 1] for r in recs]
        tests[tname] = (recs, np.array(exact_labels([r["prediction"] for r in recs], tl, repr), dtype=int), tl)
    for cal in args.calibrator or ["linear", "isotonic"]:
        p = np.zeros(len(records))
        for k in range(args.folds):
            fit_idx = np.flatnonzero(fold != k)
            held = np.flatnonzero(fold == k)
            model = fit_calibrator([records[i] for i in fit_idx], y[fit_idx].tolist(), calibrators={TYPE2: cal})
            p[held] = model.confidence([records[i] for i in held])[0]
        p = capped(records, p)
        out[cal] = {
            g: {"ECE": round(expected_calibration_error(p[ix], y[ix]), 4), "AUROC": round(auroc(p[ix], y[ix]), 4)}
            for g, ix in groups.items()
        }
        if tests:
            model = fit_calibrator(records, y.tolist(), calibrators={TYPE2: cal})
            for tname, (recs, yt, _) in tests.items():
                pt = capped(recs, model.confidence(recs)[0])
                out[cal][tname] = {"lines": len(recs), "ECE": round(expected_calibration_error(pt, yt), 4),
                                   "AUROC": round(auroc(pt, yt), 4)}  # fmt: skip
    if args.oracle:
        tgt_out = (args.shifted / name / "tgt-valid_out.txt").read_text(encoding="utf-8").splitlines()
        sets = {"valid_out": (parts["valid_out"][0], parts["valid_out"][1], tgt_out)} | tests
        out["oracle"] = {k: oracle(recs, yy, tl, repr) for k, (recs, yy, tl) in sets.items()}
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
