"""Peak memory of building the data and of one GNN training epoch at several sizes, extrapolated to the paper
protocol (479,035 USPTO-MIT reactions for the builder; 181,035 x 5 = 905,175 training lines for an x5 variant).

Each point is a fresh child process (one worker, one thread) reporting its own peak resident set size
(``ru_maxrss``); a least-squares line through the points (MiB per reaction or per line) is extrapolated.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

PAPER_REACTIONS, PAPER_LINES = 479_035, 905_175

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
from gnn_chemalgebra.inference.validation import predictor_validator
from gnn_chemalgebra.training.run import train
built, variant, lines, run_dir, lazy, config = sys.argv[1:7]
train(load_config(config, [f"data.dir={built}", f"data.variant={variant}", f"data.limit={lines}",
    "data.val_limit=200", f"run_dir={run_dir}", "train.epochs=1", "train.max_steps=0", "train.tensorboard=false",
    "train.progress=false", "train.num_threads=1", "train.max_minutes=0", f"data.lazy={lazy}"]),
    validator=predictor_validator)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _child(code: str, *args: str) -> float:
    """Peak RSS (MiB) of a fresh interpreter running ``code``."""
    out = subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True, text=True)
    return int(out.stdout.strip().splitlines()[-1]) / 1024.0  # KiB -> MiB


def _fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Least-squares intercept and slope."""
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def measure_memory(
    built: Path,
    variant: str,
    build_limits: Sequence[int],
    train_lines: Sequence[int],
    lazy: bool = False,
    config: str = "configs/gnn_cpu.yaml",
    log: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    res: dict[str, Any] = {"variant": variant, "lazy": lazy, "build": [], "train": []}
    with tempfile.TemporaryDirectory() as tmp:
        for lim in build_limits:
            mib = _child(BUILD_CHILD, f"{tmp}/b{lim}", str(lim))
            res["build"].append({"reactions": 2 * lim, "peak_rss_mib": round(mib, 1)})  # valid + test splits
            log(f"build {2 * lim} reactions: {mib:.0f} MiB")
        for lines in train_lines:
            mib = _child(TRAIN_CHILD, str(built), variant, str(lines), f"{tmp}/t{lines}", str(lazy).lower(), config)
            res["train"].append({"lines": lines, "peak_rss_mib": round(mib, 1)})
            log(f"train epoch {lines} lines: {mib:.0f} MiB")
    for part, size, paper, per in (
        ("build", "reactions", PAPER_REACTIONS, "reactions"),
        ("train", "lines", PAPER_LINES, "lines"),
    ):
        if len(res[part]) >= 2:
            a, b = _fit([r[size] for r in res[part]], [r["peak_rss_mib"] for r in res[part]])
            res[f"{part}_fit"] = {"base_mib": round(a, 1), f"mib_per_1k_{per}": round(1000 * b, 2)}
            res[f"{part}_extrapolated_mib_{paper}"] = round(a + b * paper, 0)
    return res


def memory_table(res: dict[str, Any]) -> str:
    mode = "lazy" if res["lazy"] else "in-memory"
    lines = ["| measurement | size | peak RSS (MiB) |", "|---|---|---|"]
    lines += [
        f"| data build (all 8 variants) | {r['reactions']:,} MIT reactions | {r['peak_rss_mib']:.0f} |"
        for r in res["build"]
    ]
    lines += [
        f"| one GNN training epoch ({res['variant']}, {mode}) | {r['lines']:,} lines | {r['peak_rss_mib']:.0f} |"
        for r in res["train"]
    ]
    for part, what, paper, per in (
        ("build", "build", PAPER_REACTIONS, "reactions"),
        ("train", "epoch", PAPER_LINES, "lines"),
    ):
        if f"{part}_fit" in res:
            slope, mib = res[f"{part}_fit"][f"mib_per_1k_{per}"], res[f"{part}_extrapolated_mib_{paper}"]
            lines.append(f"| {what}, extrapolated (+{slope} MiB / 1k) | {paper:,} | {mib:.0f} |")
    return "\n".join(lines) + "\n"
