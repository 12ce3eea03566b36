"""GNN vs Transformer speed, side by side in one run, at their CPU presets.

Usage::

    python scripts/bench_speed.py --built built/full --variant ChemAlgebra_F_T1_x1 [--train-lines 2000]
        [--predict-lines 300] [--repeats 3] [--threads 1]

For each repeat (models interleaved, so both see the same machine load): train each model from scratch for
one epoch over the same ``--train-lines`` lines (reactions/s from the trainers' own counters), then predict the
same ``--predict-lines`` test_in lines with the trained checkpoint (GNN: role/extent decoding; Transformer:
greedy and beam 5). Reports medians, ratios and parameter counts: a markdown table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from gnn_chemalgebra.config import load_config
from gnn_chemalgebra.data.layout import split_files
from gnn_chemalgebra.io import read_lines


def _common(args: argparse.Namespace, run_dir: Path) -> list[str]:
    return [
        f"data.dir={args.built}",
        f"data.variant={args.variant}",
        f"run_dir={run_dir}",
        "train.tensorboard=false",
        "train.progress=false",
        f"train.num_threads={args.threads}",
        "train.max_minutes=0",
        "train.device=cpu",
    ]


def train_gnn(args: argparse.Namespace, run_dir: Path) -> tuple[float, int]:
    from gnn_chemalgebra.training.run import train

    cfg = load_config(
        "configs/gnn_cpu.yaml",
        _common(args, run_dir) + [f"data.limit={args.train_lines}", "data.val_limit=100", "train.epochs=1"],
    )
    s = train(cfg)
    return s["history"][-1]["train"]["reactions_per_s"], int(s["n_params"])


def train_transformer(args: argparse.Namespace, run_dir: Path) -> tuple[float, int]:
    from gnn_chemalgebra.training.seq2seq import train

    cfg = load_config(
        "configs/transformer_cpu.yaml",
        _common(args, run_dir)
        + [
            f"data.limit_train={args.train_lines}",
            "data.limit_valid=100",
            "train.epochs=1",
            "train.val_em_lines=0",
            "train.eval_every=100000",
        ],
    )
    s = train(cfg)
    return float(s["train_reactions_per_s"]), int(s["params"])


def predict_gnn(run_dir: Path, lines: list[str]) -> float:
    from gnn_chemalgebra.inference.predictor import Predictor
    from gnn_chemalgebra.inference.run import predict_lines

    ckpt = run_dir / "best.pt" if (run_dir / "best.pt").exists() else run_dir / "last.pt"
    pred = Predictor.from_checkpoint(str(ckpt))
    t = time.perf_counter()
    predict_lines(lines, pred)
    return len(lines) / (time.perf_counter() - t)


def predict_transformer(run_dir: Path, lines: list[str], beam: int) -> float:
    from gnn_chemalgebra.training.seq2seq import load_model, predict_lines

    ckpt = run_dir / "best.pt" if (run_dir / "best.pt").exists() else run_dir / "last.pt"
    lm = load_model(ckpt)
    t = time.perf_counter()
    predict_lines(lm, lines, beam=beam)
    return len(lines) / (time.perf_counter() - t)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--built", default="built/full")
    ap.add_argument("--variant", default="ChemAlgebra_F_T1_x1")
    ap.add_argument("--train-lines", type=int, default=2000)
    ap.add_argument("--predict-lines", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    src = read_lines(split_files(Path(args.built), args.variant, "test_in")[0])[: args.predict_lines]

    rows: dict[str, list[float]] = {k: [] for k in ("gnn_train", "tf_train", "gnn_pred", "tf_pred1", "tf_pred5")}
    params = {}
    for r in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            g_dir, t_dir = Path(tmp) / "gnn", Path(tmp) / "tf"
            rate, params["gnn"] = train_gnn(args, g_dir)
            rows["gnn_train"].append(rate)
            rate, params["transformer"] = train_transformer(args, t_dir)
            rows["tf_train"].append(rate)
            rows["gnn_pred"].append(predict_gnn(g_dir, src))
            rows["tf_pred1"].append(predict_transformer(t_dir, src, 1))
            rows["tf_pred5"].append(predict_transformer(t_dir, src, 5))
        print(f"repeat {r + 1}/{args.repeats}: " + json.dumps({k: v[-1] for k, v in rows.items()}), file=sys.stderr)
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"Variant {args.variant}; {args.train_lines} training lines (1 epoch), {len(src)} test_in lines predicted;")
    print(f"{args.threads} thread(s); median of {args.repeats} interleaved repeats.\n")
    print("| | GNN | Transformer | GNN / Transformer |")
    print("|---|---|---|---|")
    print(f"| parameters | {params['gnn']:,} | {params['transformer']:,} | "
          f"{params['gnn'] / params['transformer']:.2f} |")  # fmt: skip
    print(f"| training (reactions/s) | {med['gnn_train']:.0f} | {med['tf_train']:.0f} | "
          f"{med['gnn_train'] / med['tf_train']:.1f}x |")  # fmt: skip
    print(f"| prediction, greedy (reactions/s) | {med['gnn_pred']:.0f} | {med['tf_pred1']:.1f} | "
          f"{med['gnn_pred'] / med['tf_pred1']:.1f}x |")  # fmt: skip
    print(f"| prediction, Transformer beam 5 (reactions/s) | {med['gnn_pred']:.0f} | {med['tf_pred5']:.1f} | "
          f"{med['gnn_pred'] / med['tf_pred5']:.1f}x |")  # fmt: skip
    print(json.dumps({"variant": args.variant, "params": params, "median": med, "runs": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
