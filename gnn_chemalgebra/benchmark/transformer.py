"""The sequence-Transformer baseline stage: the same cells, splits, scorer and step budgets as the GNN.

Standard model (``train``/``valid``) for test_in and test_out, cross model (``train_cross``/``valid_cross``)
for test_cross. Its budget is optimiser steps, never below the GNN's on the same cell: ``max(steps, GNN
train_steps)``, with the GNN's batch size in reactions. Greedy (or beam) decoding of the whole formula test sets
and the first ``limit_test_smiles`` lines of SMILES ones (the GNN's rows); a decoded line with broken ``{k}``
syntax is scored as an empty prediction and counted (``malformed_predictions``). ``tokenizer`` picks the
coefficient level (``paper``: ``{k}`` one token; ``digit``: records and run folders named ``transformer_digit``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import load_config
from ..data.layout import split_files, variant_props, variant_short
from ..errors import InputError
from ..evaluation.metrics import evaluate_lines, parse_prediction
from ..io import atomic_write_lines, read_lines
from ..training.run import train
from .gnn import TASKS, checkpoint_of
from .records import LOCAL, METRICS, Record, read_marker, write_marker

TASK_DIRS = {"std": "standard", "cross": "cross"}  # run-folder names of the earlier runs, kept for resuming


@dataclass
class TransformerOptions:
    built: Path
    runs: Path = Path("runs")
    config: str = "configs/transformer_steps.yaml"  # the comparison protocol: steps, cosine, early stopping on val EM
    steps: int = 5000
    limit_test: int = 0  # formula test sets: first N lines (0 = all)
    limit_test_smiles: int = 2000  # SMILES test sets: first N lines (the GNN's rows)
    beam: int = 1
    max_len: int = 0  # decoding length limit in tokens (0 = the config's decode.max_len)
    threads: int = 1
    tokenizer: str = ""  # coefficient level, model.tokenizer: paper or digit ("" = the config's)
    batch_size: int = 0  # reactions per optimiser step (0 = the config's); the pipeline passes the GNN's
    model_name: str = "transformer"
    tasks: tuple[str, ...] = ("std", "cross")
    training_data: str = LOCAL
    overrides: list[str] = field(default_factory=list)
    resume: bool = True

    def __post_init__(self) -> None:
        if self.tokenizer not in ("", "paper", "digit"):
            raise InputError(f"Transformer tokenizer must be paper or digit, got {self.tokenizer!r}")
        if self.tokenizer == "digit" and self.model_name == "transformer":
            self.model_name = "transformer_digit"  # its own run folders and records beside the paper tokenizer's


def well_formed(lines: Sequence[str], repr_: str) -> tuple[list[str], int]:
    """Lines the evaluator can read; a malformed one becomes an empty prediction (all false negatives)."""
    out, bad = [], 0
    for line in lines:
        try:
            parse_prediction(line, repr_)  # type: ignore[arg-type]
            out.append(line)
        except InputError:
            out.append("")
            bad += 1
    return out, bad


def run_dir_of(opts: TransformerOptions, variant: str, task: str) -> Path:
    """``<runs>/<model>_<variant>_<standard|cross>`` (the earlier runs' names, so they resume)."""
    return opts.runs / f"{opts.model_name}_{variant_short(variant)}_{TASK_DIRS[task]}"


def _get(cfg: Any, section: str, key: str) -> Any:
    part = cfg[section] if isinstance(cfg, dict) else getattr(cfg, section)
    return part.get(key) if isinstance(part, dict) else getattr(part, key, None)


def finished(summary: dict[str, Any] | None, steps: int) -> bool:
    """A run is done when it reached the step budget or stopped early (a larger budget continues it)."""
    return summary is not None and (summary.get("step", 0) >= steps or summary.get("stop_reason") == "early_stopping")


def train_run(
    opts: TransformerOptions, variant: str, task: str, steps: int, log: Callable[[str], None]
) -> tuple[Path, dict[str, Any]]:
    """Train (or resume, or reuse a finished) run; returns its folder and training facts for the records."""
    from ..training.seq2seq import tokenizer_name

    run_dir = run_dir_of(opts, variant, task)
    train_split, val_split, _ = TASKS[task]
    overrides = [
        f"data.dir={opts.built}", f"data.variant={variant}", f"run_dir={run_dir}",
        f"data.train_split={train_split}", f"data.val_split={val_split}",
        f"train.max_steps={steps}", "train.max_minutes=0", f"train.num_threads={opts.threads}", "train.progress=false",
    ]  # fmt: skip
    if opts.tokenizer:
        overrides.append(f"model.tokenizer={opts.tokenizer}")
    if opts.batch_size:
        overrides.append(f"train.batch_size={opts.batch_size}")
    cfg = load_config(opts.config, [*overrides, *opts.overrides])
    done = read_marker(run_dir) if opts.resume else None
    if not finished(done, steps):
        resume = opts.resume and (run_dir / "last.pt").exists()
        cfg["train"]["overwrite"] = not resume  # a fresh run here replaces what the folder holds (--no-resume)
        how = "resume" if resume else "fresh"
        log(f"train {opts.model_name} {variant_short(variant)} {task} to {steps} steps ({how})")
        before = float((read_marker(run_dir) or {}).get("wall_s", 0.0)) if resume else 0.0
        t0 = time.perf_counter()
        done = train(cfg, resume=resume)
        # wall time of every session of this run; a run trained outside the bench (no marker, e.g. the plateau
        # run of configs/transformer_plateau.yaml linked in as the cell's folder) counts at least its training time
        elapsed = before + time.perf_counter() - t0
        done["wall_s"] = max(elapsed, float(done.get("train_seconds") or 0.0))
        write_marker(run_dir, done)
    data = cfg["data"] if isinstance(cfg, dict) else cfg.data
    level = _get(cfg, "model", "tokenizer") or "paper"
    facts = {
        "steps": done.get("step"),
        "best_step": done.get("best_step"),
        "train_lines": done.get("train_examples"),
        "batch_size": _get(cfg, "train", "batch_size"),
        "tokenizer": done.get("tokenizer") or tokenizer_name(data if isinstance(data, dict) else vars(data), level),
        # three decimals: a toy run of 3 steps lasts under 0.05 s and must not read as untrained
        "train_s": round(float(done.get("wall_s") or done.get("train_seconds") or 0.0), 3),
        "max_len": opts.max_len or int(_get(cfg, "decode", "max_len") or 200),
    }
    keep = ("step", "epoch", "stop_reason", "params", "train_examples", "train_reactions_per_s", "train_tokens_per_s",
            "train_seconds", "best_value", "best_eval", "last_eval", "device")  # fmt: skip
    facts["train"] = {k: done.get(k) for k in keep}
    return run_dir, facts


def score_run(
    opts: TransformerOptions, variant: str, task: str, run_dir: Path, facts: dict[str, Any], command: str
) -> list[Record]:
    from ..training.seq2seq import load_model, write_predictions

    ckpt = checkpoint_of(run_dir)
    lm = load_model(ckpt)
    repr_ = str(variant_props(variant)["repr"])
    out = []
    for setting in TASKS[task][2]:
        src_p, tgt_p, _ = split_files(opts.built, variant, setting)
        if not src_p.exists():
            continue
        src, tgt = read_lines(src_p), read_lines(tgt_p)
        limit = opts.limit_test_smiles if repr_ == "smiles" else opts.limit_test
        if limit:
            src, tgt = src[:limit], tgt[:limit]
            src_p = run_dir / f"src-{setting}.limited.txt"
            atomic_write_lines(src_p, src)
        t0 = time.perf_counter()
        beam_file = run_dir / f"pred-{setting}.beam{opts.beam}.txt"
        info = write_predictions(lm, src_p, beam_file, beam=opts.beam, max_len=facts["max_len"], progress=False)
        top1, n_bad = well_formed(read_lines(info["top1_file"]), repr_)
        scores = evaluate_lines(top1, tgt, repr_, "paper", src_lines=src)  # type: ignore[arg-type]
        beam_lines, _ = well_formed(read_lines(info["beam_file"]), repr_)
        beam_scores = evaluate_lines(beam_lines, tgt, repr_, "paper", beam=opts.beam)  # type: ignore[arg-type]
        rec: Record = {
            "model": opts.model_name,
            "variant": variant_short(variant),
            "setting": setting,
            **{k: scores[k] for k in (*METRICS, "n")},
            f"top{opts.beam}_EM": beam_scores.get("topk", {}).get(str(opts.beam)),  # type: ignore[union-attr]
            "VAL": scores.get("VAL"),
            "malformed_predictions": n_bad,
            "BAL": scores.get("BAL"),
            "beam": opts.beam,
            "predict_reactions_per_s": info["reactions_per_s"],
            "decode_seconds": time.perf_counter() - t0,
            "checkpoint": str(ckpt),
            "command": command,
            "task": TASK_DIRS[task],
            "training_data": opts.training_data,
            **facts,
        }
        out.append(rec)
    return out


def transformer_records(
    opts: TransformerOptions,
    variant: str,
    command: str,
    gnn_steps: Callable[[str, str], int | None] = lambda *_: None,
    skip: Callable[[str, tuple[str, ...], int], bool] = lambda *_: False,
    log: Callable[[str], None] = lambda _: None,
) -> list[Record]:
    """Both tasks of one variant; ``gnn_steps(variant, task)`` is the GNN's step count on that cell (the floor
    of this run's budget), ``skip(task, settings, steps)`` says records of that budget exist already (resume)."""
    out: list[Record] = []
    for task in opts.tasks:
        settings = TASKS[task][2]
        steps = max(opts.steps, gnn_steps(variant, task) or 0)
        if skip(task, settings, steps):
            continue
        run_dir, facts = train_run(opts, variant, task, steps, log)
        for rec in score_run(opts, variant, task, run_dir, facts, command):
            log(f"  {rec['variant']} {rec['model']} {rec['setting']}: EM {rec['EM']:.2f} n={rec['n']} steps={steps}")
            out.append(rec)
    return out
