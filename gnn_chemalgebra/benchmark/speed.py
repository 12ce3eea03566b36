"""GNN vs Transformer speed, side by side in one run: training and prediction reactions/s, interleaved.

Per repeat (both models see the same machine load): each model trains one epoch from scratch on the same
``train_lines`` lines (reactions/s from the trainer's own counters), then predicts the same ``predict_lines``
test_in lines (GNN: role/extent decoding; Transformer: greedy and beam 5), with the given trained checkpoints
(a trained Transformer stops decoding at its end token; an untrained one runs to the length limit) or else the
one-epoch models. Medians, ratios and parameter counts.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import load_config
from ..data.layout import split_files
from ..inference.validation import predictor_validator
from ..io import read_lines
from ..training.run import train
from .gnn import checkpoint_of

KEYS = ("gnn_train", "tf_train", "gnn_pred", "tf_pred1", "tf_pred5")


@dataclass
class SpeedOptions:
    built: Path
    variant: str = "ChemAlgebra_F_T1_x1"
    train_lines: int = 2000
    predict_lines: int = 300
    repeats: int = 3
    threads: int = 1
    gnn_config: str = "configs/gnn_cpu.yaml"
    tf_config: str = "configs/transformer_cpu.yaml"
    gnn_checkpoint: Path | None = None  # trained models to time prediction with (default: the one-epoch ones)
    tf_checkpoint: Path | None = None


def _train(opts: SpeedOptions, config: str, run_dir: Path, extra: list[str]) -> tuple[float, int]:
    """One epoch from scratch; (training reactions/s, parameters) from the trainer's summary."""
    common = [
        f"data.dir={opts.built}", f"data.variant={opts.variant}", f"run_dir={run_dir}", "train.tensorboard=false",
        "train.progress=false", f"train.num_threads={opts.threads}", "train.max_minutes=0", "train.max_steps=0",
        "train.device=cpu", "train.epochs=1", f"data.limit={opts.train_lines}", "data.val_limit=100",
    ]  # fmt: skip
    s = train(load_config(config, [*common, *extra]), validator=predictor_validator)
    rate = s.get("train_reactions_per_s") or s["history"][-1]["train"]["reactions_per_s"]
    return float(rate), int(s.get("n_params") or s["params"])


def _predict_gnn(checkpoint: Path, lines: list[str]) -> float:
    from ..inference.predict_command import predict_lines
    from ..inference.predictor import Predictor

    pred = Predictor.from_checkpoint(str(checkpoint))
    t = time.perf_counter()
    predict_lines(lines, pred)
    return len(lines) / (time.perf_counter() - t)


def _predict_tf(checkpoint: Path, lines: list[str], beam: int) -> float:
    from ..training.seq2seq import load_model, predict_lines

    lm = load_model(checkpoint)
    t = time.perf_counter()
    predict_lines(lm, lines, beam=beam)
    return len(lines) / (time.perf_counter() - t)


def checkpoint_facts(path: Path | None) -> dict[str, Any] | None:
    """Which training state a timed checkpoint holds (step, epoch, its best validation metrics), for the record."""
    if path is None:
        return None
    from ..checkpoint import load_checkpoint

    ck = load_checkpoint(path)
    best = (ck.get("meta") or {}).get("best_metrics") or {}
    return {"path": str(path), "step": ck.get("step"), "epoch": ck.get("epoch"), "best_metrics": best}


def measure_speed(opts: SpeedOptions, log: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """Interleaved repeats; returns per-repeat rates, their medians, the parameter counts, what the timed
    checkpoints hold, and the machine's load before and after (ratios are fair under load, absolute rates not)."""
    import torch

    torch.set_num_threads(opts.threads)
    load_before = os.getloadavg()[0]
    src = read_lines(split_files(opts.built, opts.variant, "test_in")[0])[: opts.predict_lines]
    runs: dict[str, list[float]] = {k: [] for k in KEYS}
    params: dict[str, int] = {}
    for r in range(opts.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            g_dir, t_dir = Path(tmp) / "gnn", Path(tmp) / "tf"
            rate, params["gnn"] = _train(opts, opts.gnn_config, g_dir, [])
            runs["gnn_train"].append(rate)
            rate, params["transformer"] = _train(  # no decoding in validation: monitor token accuracy
                opts,
                opts.tf_config,
                t_dir,
                ["train.val_em_lines=0", "train.eval_every=0", "train.monitor=val_token_acc"],
            )
            runs["tf_train"].append(rate)
            g_ck, t_ck = opts.gnn_checkpoint or checkpoint_of(g_dir), opts.tf_checkpoint or checkpoint_of(t_dir)
            runs["gnn_pred"].append(_predict_gnn(g_ck, src))
            runs["tf_pred1"].append(_predict_tf(t_ck, src, 1))
            runs["tf_pred5"].append(_predict_tf(t_ck, src, 5))
        log(f"repeat {r + 1}/{opts.repeats}: " + ", ".join(f"{k} {v[-1]:.1f}" for k, v in runs.items()))
    return {
        "variant": opts.variant,
        "train_lines": opts.train_lines,
        "predict_lines": len(src),
        "threads": opts.threads,
        "repeats": opts.repeats,
        "checkpoints": {
            "gnn": str(opts.gnn_checkpoint or "one-epoch"),
            "transformer": str(opts.tf_checkpoint or "one-epoch"),
        },
        "checkpoint_facts": {
            "gnn": checkpoint_facts(opts.gnn_checkpoint),
            "transformer": checkpoint_facts(opts.tf_checkpoint),
        },
        "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "date_utc": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()),
        "params": params,
        "median": {k: statistics.median(v) for k, v in runs.items()},
        "runs": runs,
    }


def speed_table(res: dict[str, Any]) -> str:
    med, p = res["median"], res["params"]
    return "\n".join(
        [
            f"Variant {res['variant']}; {res['train_lines']} training lines (1 epoch), {res['predict_lines']} test_in "
            f"lines predicted; {res['threads']} thread(s); median of {res['repeats']} interleaved repeats; prediction "
            f"with GNN {res['checkpoints']['gnn']}, Transformer {res['checkpoints']['transformer']}.",
            "",
            "| | GNN | Transformer | GNN / Transformer |",
            "|---|---|---|---|",
            f"| parameters | {p['gnn']:,} | {p['transformer']:,} | {p['gnn'] / p['transformer']:.2f} |",
            f"| training (reactions/s) | {med['gnn_train']:.0f} | {med['tf_train']:.0f} | "
            f"{med['gnn_train'] / med['tf_train']:.1f}x |",
            f"| prediction, greedy (reactions/s) | {med['gnn_pred']:.0f} | {med['tf_pred1']:.1f} | "
            f"{med['gnn_pred'] / med['tf_pred1']:.1f}x |",
            f"| prediction, Transformer beam 5 (reactions/s) | {med['gnn_pred']:.0f} | {med['tf_pred5']:.1f} | "
            f"{med['gnn_pred'] / med['tf_pred5']:.1f}x |",
            "",
        ]
    )
