"""Peak memory of building the data and of one training epoch, measured at several sizes and extrapolated.

Usage::

    python scripts/bench_memory.py --built built/full [--build-limits 1000,3000,6000] [--train-lines 2000,6000,12000]

Each measurement runs in a fresh child process (one worker, one thread) and reports that process's peak resident
set size (``ru_maxrss``). A least-squares line through the measured points (MiB per reaction or per line) is
extrapolated to the paper protocol: 479,035 USPTO-MIT reactions for the builder and 181,035 x 5 = 905,175
training lines for an x5 variant. Output: a markdown table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile

BUILD_CHILD = """
import resource, sys
from gnn_chemalgebra.data.build import build_all
build_all(sys.argv[1], workers=1, limit=int(sys.argv[2]), log=lambda *_: None)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

TRAIN_CHILD = """
import resource, sys
import torch
torch.set_num_threads(1)
from gnn_chemalgebra.config import load_config
from gnn_chemalgebra.training.run import train
cfg = load_config("configs/gnn_cpu.yaml", [f"data.dir={sys.argv[1]}", f"data.variant={sys.argv[2]}",
    f"data.limit={sys.argv[3]}", "data.val_limit=200", f"run_dir={sys.argv[4]}", "train.epochs=1",
    "train.tensorboard=false", "train.progress=false", "train.num_threads=1", "train.max_minutes=0",
    f"data.lazy={sys.argv[5]}"])
train(cfg)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _child(code: str, *args: str) -> float:
    out = subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True, text=True)
    return int(out.stdout.strip().splitlines()[-1]) / 1024.0  # KiB -> MiB


def _fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--built", default="built/full")
    ap.add_argument("--variant", default="ChemAlgebra_F_T1_x5")
    ap.add_argument("--build-limits", default="1000,3000,6000", help="reactions per MIT split (valid and test)")
    ap.add_argument("--train-lines", default="2000,6000,12000")
    ap.add_argument("--lazy", action="store_true", help="train with data.lazy=true (bags featurised on access)")
    args = ap.parse_args()

    result: dict = {"build": [], "train": []}
    with tempfile.TemporaryDirectory() as tmp:
        for lim in (int(x) for x in args.build_limits.split(",") if x):
            mib = _child(BUILD_CHILD, f"{tmp}/b{lim}", str(lim))
            result["build"].append({"reactions": 2 * lim, "peak_rss_mib": round(mib, 1)})
            print(f"build {2 * lim} reactions: {mib:.0f} MiB", file=sys.stderr)
        for lines in map(int, args.train_lines.split(",")):
            lazy = "true" if args.lazy else "false"
            mib = _child(TRAIN_CHILD, args.built, args.variant, str(lines), f"{tmp}/t{lines}", lazy)
            result["train"].append({"lines": lines, "peak_rss_mib": round(mib, 1)})
            print(f"train epoch {lines} lines: {mib:.0f} MiB", file=sys.stderr)

    if result["build"]:
        a, b = _fit([r["reactions"] for r in result["build"]], [r["peak_rss_mib"] for r in result["build"]])
        result["build_fit"] = {"base_mib": round(a, 1), "mib_per_1k_reactions": round(1000 * b, 2)}
        result["build_extrapolated_mib_479035"] = round(a + b * 479_035, 0)
    a2, b2 = _fit([r["lines"] for r in result["train"]], [r["peak_rss_mib"] for r in result["train"]])
    result["train_fit"] = {"base_mib": round(a2, 1), "mib_per_1k_lines": round(1000 * b2, 2)}
    result["train_extrapolated_mib_905175"] = round(a2 + b2 * 905_175, 0)

    print("| measurement | size | peak RSS (MiB) |")
    print("|---|---|---|")
    for r in result["build"]:
        print(f"| data build (all 8 variants) | {r['reactions']:,} MIT reactions | {r['peak_rss_mib']:.0f} |")
    for r in result["train"]:
        mode = "lazy" if args.lazy else "in-memory"
        print(f"| one GNN training epoch ({args.variant}, {mode}) | {r['lines']:,} lines | {r['peak_rss_mib']:.0f} |")
    if result["build"]:
        print(
            f"| build, extrapolated (+{result['build_fit']['mib_per_1k_reactions']} MiB / 1k) | 479,035 | "
            f"{result['build_extrapolated_mib_479035']:.0f} |"
        )
    print(
        f"| epoch, extrapolated (+{result['train_fit']['mib_per_1k_lines']} MiB / 1k) | 905,175 | "
        f"{result['train_extrapolated_mib_905175']:.0f} |"
    )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
