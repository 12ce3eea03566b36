"""Mixed precision checked: the same GNN, same seed, trained with bf16 autocast on CUDA, in fp32 on CUDA and on
the CPU; training reactions/s side by side, and a verdict on whether the bf16 loss is finite and within a
relative tolerance of the fp32 one. Without CUDA only the CPU row is measured (so the path runs on any machine).
"""

from __future__ import annotations

import math
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import load_config
from ..inference.validation import predictor_validator
from ..training.run import train


@dataclass
class GpuOptions:
    built: Path
    variant: str = "ChemAlgebra_F_T1_x5"
    config: str = "configs/gnn_cpu.yaml"
    lines: int = 20000
    val_lines: int = 500
    epochs: int = 2
    batch_size: int = 64
    cpu_threads: int = 0  # 0 = all cores
    tol: float = 0.05


def train_row(opts: GpuOptions, device: str, amp: bool, threads: int) -> dict[str, Any]:
    """One training run; median epoch rate, final training loss and validation EM from its history."""
    with tempfile.TemporaryDirectory() as tmp:
        overrides = [
            f"data.dir={opts.built}", f"data.variant={opts.variant}", f"data.limit={opts.lines}",
            f"data.val_limit={opts.val_lines}", f"run_dir={Path(tmp) / 'run'}", f"train.epochs={opts.epochs}",
            f"train.device={device}", f"train.amp={str(amp).lower()}", f"train.num_threads={threads}",
            f"train.batch_size={opts.batch_size}", "train.patience=1000", "train.tensorboard=false",
            "train.progress=false", "train.max_minutes=0", "train.max_steps=0",
        ]  # fmt: skip
        s = train(load_config(opts.config, overrides), validator=predictor_validator)
    hist = s["history"]
    return {
        "device": device,
        "amp_bf16": amp and device.startswith("cuda"),
        "reactions_per_s": statistics.median(h["train"]["reactions_per_s"] for h in hist),
        "final_loss": hist[-1]["train"]["total"],
        "val_EM": hist[-1].get("val", {}).get("EM", float("nan")),
        "epochs": len(hist),
        "n_train": s["n_train"],
    }


def gpu_check(opts: GpuOptions) -> dict[str, Any]:
    import torch

    rows = []
    cuda = torch.cuda.is_available()
    if cuda:
        rows += [train_row(opts, "cuda", True, 1), train_row(opts, "cuda", False, 1)]
    rows.append(train_row(opts, "cpu", False, opts.cpu_threads or (torch.get_num_threads() or 1)))
    ok = True
    if cuda:
        bf16, fp32 = rows[0]["final_loss"], rows[1]["final_loss"]
        ok = math.isfinite(bf16) and abs(bf16 - fp32) <= opts.tol * abs(fp32)
    name = torch.cuda.get_device_name(0) if cuda else None
    return {"cuda": cuda, "gpu": name, "rows": rows, "mixed_precision_ok": ok}


def gpu_table(res: dict[str, Any]) -> str:
    cpu_rate = res["rows"][-1]["reactions_per_s"]
    lines = ["| device | bf16 | train rxn/s | vs CPU | final loss | val EM |", "|---|---|---|---|---|---|"]
    for r in res["rows"]:
        lines.append(
            f"| {r['device']} | {r['amp_bf16']} | {r['reactions_per_s']:.0f} | {r['reactions_per_s'] / cpu_rate:.1f}x "
            f"| {r['final_loss']:.4f} | {r['val_EM']:.2f} |"
        )
    if not res["cuda"]:
        lines.append("\nCUDA is not available on this machine: only the CPU row was measured.")
    return "\n".join(lines) + "\n"
