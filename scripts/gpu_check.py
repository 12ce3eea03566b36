"""GPU check: mixed-precision (bf16) GNN training on CUDA against fp32 on CUDA and on the CPU, side by side.

Usage (on a machine with a built dataset; the variant's first --lines training lines are used)::

    python scripts/gpu_check.py --built built/full --variant ChemAlgebra_F_T1_x5 --lines 20000 --epochs 2

Per configuration it trains the same model from the same seed and reports training reactions/s (median over
epochs), the final training loss and validation EM; it fails (exit 1) if the bf16 loss is not finite or is more
than --tol away (relative) from the fp32 loss. Without CUDA it runs the CPU row only and says so, so the
script itself is tested on CPU machines. Output: a markdown table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
from pathlib import Path

import torch

from gnn_chemalgebra.config import load_config
from gnn_chemalgebra.training.run import train


def run(args: argparse.Namespace, device: str, amp: bool, threads: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config(
            args.config,
            [
                f"data.dir={args.built}",
                f"data.variant={args.variant}",
                f"data.limit={args.lines}",
                f"data.val_limit={args.val_lines}",
                f"run_dir={Path(tmp) / 'run'}",
                f"train.epochs={args.epochs}",
                f"train.device={device}",
                f"train.amp={str(amp).lower()}",
                f"train.num_threads={threads}",
                f"train.batch_size={args.batch_size}",
                "train.patience=1000",
                "train.tensorboard=false",
                "train.progress=false",
                "train.max_minutes=0",
            ],
        )
        s = train(cfg)
    hist = s["history"]
    return {
        "device": device,
        "amp_bf16": amp and device.startswith("cuda"),
        "reactions_per_s": statistics.median(h["train"]["reactions_per_s"] for h in hist),
        "final_loss": hist[-1]["train"]["total"],
        "val_EM": hist[-1]["val"]["EM"],
        "epochs": len(hist),
        "n_train": s["n_train"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--built", default="built/full")
    ap.add_argument("--variant", default="ChemAlgebra_F_T1_x5")
    ap.add_argument("--config", default="configs/gnn_cpu.yaml")
    ap.add_argument("--lines", type=int, default=20000)
    ap.add_argument("--val-lines", type=int, default=500)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--cpu-threads", type=int, default=0, help="0 = all cores")
    ap.add_argument("--tol", type=float, default=0.05, help="relative tolerance bf16 vs fp32 final loss")
    args = ap.parse_args()

    rows = []
    cuda = torch.cuda.is_available()
    if cuda:
        rows.append(run(args, "cuda", True, 1))
        rows.append(run(args, "cuda", False, 1))
    rows.append(run(args, "cpu", False, args.cpu_threads or (torch.get_num_threads() or 1)))
    cpu_rate = rows[-1]["reactions_per_s"]
    print("| device | bf16 | train rxn/s | vs CPU | final loss | val EM |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['device']} | {r['amp_bf16']} | {r['reactions_per_s']:.0f} | {r['reactions_per_s'] / cpu_rate:.1f}x "
            f"| {r['final_loss']:.4f} | {r['val_EM']:.2f} |"
        )
    ok = True
    if cuda:
        bf16, fp32 = rows[0]["final_loss"], rows[1]["final_loss"]
        ok = math.isfinite(bf16) and abs(bf16 - fp32) <= args.tol * abs(fp32)
        name = torch.cuda.get_device_name(0)
    else:
        name = None
        print("CUDA is not available on this machine: only the CPU row was measured.")
    print(json.dumps({"cuda": cuda, "gpu": name, "rows": rows, "mixed_precision_ok": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
