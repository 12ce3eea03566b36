"""EM against the number of training reactions for one recipe: the points, two fits, and what a target needs.

Why: "more reactions" is the lever the extra data pulled; a curve over random shares of the same training lines
(scripts/subsample_train.py), every run on the same recipe and scored on the full test set, says how much one
more doubling of the reactions is worth and so how many reactions a target EM would take. Two fits bracket the
extrapolation: EM linear in log2(n) (gains per doubling stay constant) and the error as a power law in n
(gains per doubling shrink). Each point is a bench records file (``gnnca bench run --out DIR`` writes
``DIR/gnn.json``); several files for one n are averaged (seeds).

    python scripts/data_scaling.py --point 14174=runs/scale_f12.5/results/gnn.json ... \
      --target 90 --json results/extra/data_scaling.json --png results/extra/data_scaling.png
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np


def read_em(path: Path, variant: str, setting: str) -> tuple[float, float | None]:
    """(test EM, best validation EM) of the one record of ``variant`` / ``setting`` in a records file."""
    recs = json.loads(path.read_text())
    recs = recs if isinstance(recs, list) else recs.get("records", [])
    hits = [r for r in recs if r.get("variant") == variant and r.get("setting") == setting]
    if len(hits) != 1:
        raise SystemExit(f"data_scaling: error: {path}: {len(hits)} records of {variant} {setting}, expected 1")
    best = (hits[0].get("val_best") or {}).get("EM")
    return float(hits[0]["EM"]), (float(best) if best is not None else None)


def fit_log_linear(n: np.ndarray, em: np.ndarray) -> tuple[float, float]:
    """EM = a + b * log2(n): (a, b); b is the gain per doubling."""
    b, a = np.polyfit(np.log2(n), em, 1)
    return float(a), float(b)


def fit_power_error(n: np.ndarray, em: np.ndarray) -> tuple[float, float]:
    """100 - EM = c * n ** -alpha: (c, alpha)."""
    slope, icpt = np.polyfit(np.log(n), np.log(100.0 - em), 1)
    return float(math.exp(icpt)), float(-slope)


def needed(target: float, a: float, b: float, c: float, alpha: float) -> dict[str, float | None]:
    """Reactions each fit needs for ``target`` EM (None: the fit never gets there)."""
    lin = 2 ** ((target - a) / b) if b > 0 else None
    pw = (c / (100.0 - target)) ** (1 / alpha) if alpha > 0 and target < 100 else None
    return {"log_linear": lin, "power_law": pw}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--point", action="append", required=True, metavar="N=RECORDS.json",
                    help="training reactions and a bench records file (repeat; same N averages)")  # fmt: skip
    ap.add_argument("--variant", default="F_T1_x1")
    ap.add_argument("--setting", default="test_in")
    ap.add_argument("--target", type=float, action="append", default=[], help="EM to extrapolate to (repeat)")
    ap.add_argument("--json", type=Path, help="write the table, fits and extrapolations here")
    ap.add_argument("--png", type=Path, help="draw the points and both fits here")
    args = ap.parse_args()
    runs: dict[int, list[tuple[float, float | None, str]]] = defaultdict(list)
    for spec in args.point:
        n_s, sep, path = spec.partition("=")
        if not sep or not n_s.isdigit() or int(n_s) <= 0:
            ap.error(f"--point {spec!r}: expected N=RECORDS.json with N a positive count")
        em, val = read_em(Path(path), args.variant, args.setting)
        runs[int(n_s)].append((em, val, path))
    ns = sorted(runs)
    if len(ns) < 2:
        ap.error("need points at two or more training sizes")
    n = np.array(ns, dtype=float)
    em = np.array([np.mean([r[0] for r in runs[k]]) for k in ns])
    a, b = fit_log_linear(n, em)
    c, alpha = fit_power_error(n, em)
    rows = [
        {"n_train": k, "EM_mean": round(float(np.mean([r[0] for r in runs[k]])), 2),
         "EM": [r[0] for r in runs[k]], "val_best": [r[1] for r in runs[k]], "records": [r[2] for r in runs[k]]}
        for k in ns
    ]  # fmt: skip
    out = {
        "variant": args.variant, "setting": args.setting, "points": rows,
        "log_linear": {"a": round(a, 3), "per_doubling": round(b, 3)},
        "power_law_error": {"c": round(c, 3), "alpha": round(alpha, 4)},
        "needed": {f"{t:g}": {k: (round(v) if v else None) for k, v in needed(t, a, b, c, alpha).items()}
                   for t in args.target},
    }  # fmt: skip
    print(f"| training reactions | {args.setting} EM (runs) | mean |")
    print("|---|---|---|")
    for r in rows:
        print(f"| {r['n_train']:,} | {', '.join(f'{x:.2f}' for x in r['EM'])} | {r['EM_mean']:.2f} |")
    print(f"log-linear: {b:+.2f} EM per doubling; power law: error ~ n^-{alpha:.3f}")
    for t, v in out["needed"].items():
        print(f"EM {t}: log-linear {v['log_linear']:,} reactions, power law {v['power_law']:,}" if all(v.values())
              else f"EM {t}: {v}")  # fmt: skip
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        hi = max([n.max() * 8] + [v for t in out["needed"].values() for v in t.values() if v and v < n.max() * 64])
        xs = np.geomspace(n.min(), hi, 100)
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for k in ns:
            ax.scatter([k] * len(runs[k]), [r[0] for r in runs[k]], color="#1b9e77", zorder=3)
        ax.plot(xs, a + b * np.log2(xs), color="#7570b3", label=f"EM linear in log n ({b:+.2f} per doubling)")
        ax.plot(xs, 100 - c * xs**-alpha, color="#d95f02", label=f"error ~ n^-{alpha:.2f}")
        for t in args.target:
            ax.axhline(t, color="black", linestyle="dashed", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("training reactions (random shares of one build's training lines)")
        ax.set_ylabel(f"{args.variant} {args.setting} EM (full set)")
        ax.legend(loc="lower right", fontsize=8)
        fig.tight_layout()
        args.png.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(args.png, dpi=120)
        plt.close(fig)


if __name__ == "__main__":
    main()
