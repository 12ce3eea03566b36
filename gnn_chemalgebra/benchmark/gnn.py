"""The GNN stage (and its naive coefficient ablation): train, predict and score each variant's models.

Per variant, the standard model trains on ``train``/``valid`` and is scored on ``test_in`` and ``test_out``;
the cross model trains on ``train_cross``/``valid_cross`` and is scored on ``test_cross``. Budgets are optimiser
steps (equal compute whatever else shares the machine). Everything resumes: a run folder whose ``DONE`` marker
meets the step budget is not trained again, an interrupted one (or a finished one given a larger ``--steps``)
continues from ``last.pt``, and prediction files already written are re-scored, not recomputed, unless the
model they came from has changed since (its run trained on, or the shared Type-1 cross copy is out of date).
"""

from __future__ import annotations

import filecmp
import json
import re
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import load_config
from ..data.dataset import load_examples
from ..data.layout import variant_props, variant_short
from ..evaluation.metrics import evaluate_lines
from ..inference.validation import predictor_validator
from ..io import atomic_write_json, atomic_write_lines, read_lines
from ..training.run import train
from .errors import main_accuracy, record_errors, report_errors
from .records import LOCAL, METRICS, Record, read_marker, write_marker

TASKS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "std": ("train", "valid", ("test_in", "test_out")),
    "cross": ("train_cross", "valid_cross", ("test_cross",)),
}
MODEL_NAMES = {"gnn": "gnn", "gnn_naive": "naive"}  # record model -> config model.name


@dataclass
class GnnOptions:
    """What the GNN stage trains and scores (defaults: the results table's protocol)."""

    built: Path
    runs: Path = Path("runs/bench")
    config: str = "configs/gnn_bench.yaml"
    steps: int = 4000
    steps_smiles: int = 2500
    threads: int = 1
    tasks: tuple[str, ...] = ("std", "cross")
    t1_cross_from_std: bool = True
    naive_cross: bool = False
    limit_test: int = 0
    limit_test_smiles: int = 2000
    naive_limit: int = 3000
    edit_checkpoint: str = ""
    val_limit_smiles: int = 500
    beam_smiles: int = 5
    training_data: str = LOCAL
    overrides: list[str] = field(default_factory=list)
    resume: bool = True


def run_dir_of(opts: GnnOptions, variant: str, model: str, task: str) -> Path:
    """``<runs>/<variant>/<model>_<task>`` (suffixed by the training data when it is not the local protocol; ``+``
    and ``,`` become ``_``: a comma would split the checkpoint path as ``--checkpoint`` splits ensembles)."""
    suffix = "" if opts.training_data == LOCAL else "_" + re.sub(r"[+,]", "_", opts.training_data)
    return opts.runs / variant_short(variant) / f"{model}_{task}{suffix}"


def run_config(opts: GnnOptions, variant: str, model: str, task: str, run_dir: Path) -> Any:
    train_split, val_split, _ = TASKS[task]
    smiles = variant_props(variant)["repr"] == "smiles"
    # the step budget alone: a preset's epoch count (gnn_cpu.yaml: 30) would otherwise cut a longer --steps short
    extra = [f"train.max_steps={opts.steps_smiles if smiles else opts.steps}", "train.epochs=0", "train.max_minutes=0"]
    if smiles and opts.edit_checkpoint:  # validate whole SMILES lines, product graphs included
        extra.append(f"model.edit_checkpoint={opts.edit_checkpoint}")
    if smiles and opts.val_limit_smiles:
        extra.append(f"data.val_limit={opts.val_limit_smiles}")
    return load_config(
        opts.config,
        [
            f"data.dir={opts.built}",
            f"data.variant={variant}",
            f"data.train_split={train_split}",
            f"data.val_split={val_split}",
            f"run_dir={run_dir}",
            f"model.name={MODEL_NAMES[model]}",
            f"train.num_threads={opts.threads}",
            *extra,
            *opts.overrides,
        ],
    )


def checkpoint_of(run_dir: Path) -> Path:
    """``best.pt``, or ``last.pt`` when validation never improved (a very short run)."""
    return run_dir / "best.pt" if (run_dir / "best.pt").exists() else run_dir / "last.pt"


def step_budget(opts: GnnOptions, variant: str) -> int:
    return opts.steps_smiles if variant_props(variant)["repr"] == "smiles" else opts.steps


def budget_met(summary: dict[str, Any], steps: int) -> bool:
    """A finished run serves a budget when it reached it or stopped on its own (early stopping, a target); a run
    that stopped at a smaller budget (or at a preset's epoch count) continues under the larger one."""
    return int(summary.get("step", summary.get("steps", 0)) or 0) >= steps or summary.get("stop_reason") in (
        "early_stopping",
        "target",
    )


def shares_std(opts: GnnOptions, variant: str, task: str) -> bool:
    return task == "cross" and opts.t1_cross_from_std and int(variant_props(variant)["type"]) == 1  # type: ignore[arg-type]


def clear_predictions(run_dir: Path) -> int:
    """Remove a run folder's prediction, prediction-info and error files (they belong to an older model)."""
    stale = [p for pattern in ("pred-*.txt", "predict-*.json", "errors-*.json") for p in run_dir.glob(pattern)]
    for p in stale:
        p.unlink()
    return len(stale)


def ensure_trained(opts: GnnOptions, variant: str, model: str, task: str, log: Callable[[str], None]) -> Path:
    """The run folder of a finished training run (trained, resumed or shared here when needed)."""
    run_dir = run_dir_of(opts, variant, model, task)
    marker = read_marker(run_dir) if opts.resume else None
    if shares_std(opts, variant, task):
        std = ensure_trained(opts, variant, model, "std", log)
        copy = run_dir / "best.pt"
        if marker is not None and copy.exists() and filecmp.cmp(checkpoint_of(std), copy, shallow=False):
            return run_dir
        return share_std_model(opts, variant, model, run_dir, log, std)
    if marker is not None and checkpoint_of(run_dir).exists() and budget_met(marker, step_budget(opts, variant)):
        return run_dir
    if opts.resume and (n_stale := clear_predictions(run_dir)):
        log(f"  {run_dir}: {n_stale} prediction files of the earlier model removed")
    cfg = run_config(opts, variant, model, task, run_dir)
    resume = opts.resume and (run_dir / "last.pt").exists()
    cfg["train"]["overwrite"] = not resume  # a fresh run here replaces what the folder holds (--no-resume, a stale run)
    log(f"train {variant_short(variant)} {model} {task} ({'resume' if resume else 'fresh'}) -> {run_dir}")
    t0 = time.perf_counter()
    summary = train(cfg, resume=resume, validator=predictor_validator)
    summary["wall_s"] = time.perf_counter() - t0
    write_marker(run_dir, summary)
    log(f"  best val {summary.get('best', {})}")
    return run_dir


def share_std_model(
    opts: GnnOptions, variant: str, model: str, run_dir: Path, log: Callable[[str], None], std: Path | None = None
) -> Path:
    """Type 1: ``train_cross``/``valid_cross`` hold the same reactions in the same order as ``train``/``valid``
    and every term of a line carries one k, so the coefficient-blind network's inputs and labels are identical
    (``tests/data/test_dataset_cross.py``): the cross run folder gets a copy of the standard model instead of a
    second, bit-identical training run. Predictions of an earlier copy are removed with it."""
    std = std or ensure_trained(opts, variant, model, "std", log)
    run_dir.mkdir(parents=True, exist_ok=True)
    clear_predictions(run_dir)
    shutil.copyfile(checkpoint_of(std), run_dir / "best.pt")
    write_marker(run_dir, {**(read_marker(std) or {}), "shared_with": str(std)})
    log(f"{variant_short(variant)} {model} cross: Type 1, the standard model serves ({std})")
    return run_dir


def test_limit(opts: GnnOptions, variant: str, model: str) -> int:
    """Lines scored per test setting (0 = all): SMILES rows and the naive ablation on a prefix."""
    limit = opts.limit_test or (opts.naive_limit if model == "gnn_naive" else 0)
    if variant_props(variant)["repr"] == "smiles" and opts.limit_test_smiles:
        limit = min(limit or opts.limit_test_smiles, opts.limit_test_smiles)
    return limit


def predict_reports(checkpoint: Path, examples: Sequence[Any], beam: int) -> list[dict[str, Any]]:
    """The predictor's per-line reports (``prediction``, ``nu``, ``extent``, ``beam``, ``fallback`` ...)."""
    from ..inference.predictor import Predictor

    preds = Predictor.from_checkpoint(str(checkpoint)).predict(examples, batch_size=256, beam=beam)
    return [p.to_json() for p in preds]  # stored and read as --json records


def predict_setting(opts: GnnOptions, variant: str, model: str, run_dir: Path, setting: str) -> None:
    """Write ``pred-<setting>.txt`` plus ``predict-<setting>.json`` (time, balanced and fallback counts) and,
    for the GNN, ``errors-<setting>.json``; skipped when the prediction file is complete and resuming."""
    repr_ = str(variant_props(variant)["repr"])
    exs = load_examples(opts.built, variant, setting, test_limit(opts, variant, model) or None)
    p_file = run_dir / f"pred-{setting}.txt"
    if opts.resume and p_file.exists() and len(read_lines(p_file)) == len(exs):
        return
    t0 = time.perf_counter()
    reports = predict_reports(checkpoint_of(run_dir), exs, opts.beam_smiles if repr_ == "smiles" else 1)
    info: dict[str, Any] = {"n": len(exs), "predict_s": time.perf_counter() - t0}
    info["balanced"] = sum(bool(r.get("balanced")) for r in reports)
    if any("fallback" in r for r in reports):  # lines written without a balanced hypothesis (source copied)
        info["fallback"] = sum(bool(r.get("fallback")) for r in reports)
    lines = [r["prediction"] for r in reports]
    if model == "gnn":
        atomic_write_json(
            run_dir / f"errors-{setting}.json", {**report_errors(exs, reports, repr_), "balanced": info["balanced"]}
        )
    atomic_write_json(run_dir / f"predict-{setting}.json", info)
    atomic_write_lines(p_file, lines)  # last: its presence means the setting is done


def score_setting(
    opts: GnnOptions, variant: str, model: str, task: str, run_dir: Path, setting: str, command: str
) -> Record:
    repr_ = str(variant_props(variant)["repr"])
    lines = read_lines(run_dir / f"pred-{setting}.txt")
    tgts = [ex.tgt or "" for ex in load_examples(opts.built, variant, setting, len(lines))]
    res = evaluate_lines(lines, tgts, repr_, "paper")  # type: ignore[arg-type]
    strict = evaluate_lines(lines, tgts, repr_, "strict")  # type: ignore[arg-type]
    done = read_marker(run_dir) or {}
    rec: Record = {
        "model": model,
        "variant": variant_short(variant),
        "setting": setting,
        **{k: round(float(res[k]), 2) for k in METRICS},  # type: ignore[arg-type]
        "n": int(res["n"]),  # type: ignore[call-overload]
        "EM_strict": round(float(strict["EM"]), 2),  # type: ignore[arg-type]
        "command": command,
        "train_task": task,
        "train_steps": done.get("steps"),
        "train_s": round(float(done.get("train_s", 0.0)), 3),
        "val_best": done.get("best", {}),
        "n_params": done.get("n_params"),
        "stop_reason": done.get("stop_reason"),
    }
    e_file = run_dir / f"errors-{setting}.json"
    if e_file.exists():  # main-product accuracy over the lines with a new main product (SMILES: beam 5)
        errors = json.loads(e_file.read_text())
        rec.update(main_accuracy(errors["wrong"], repr_))
        rec["errors"] = record_errors(errors)  # the breakdown travels with the record (gnn_errors_records.md)
    p_info = run_dir / f"predict-{setting}.json"
    if p_info.exists() and "fallback" in (info := json.loads(p_info.read_text())):
        rec["fallback"] = info["fallback"]
    rec["training_data"] = opts.training_data
    return rec


def gnn_records(
    opts: GnnOptions,
    variant: str,
    models: Sequence[str],
    command: str,
    skip: Callable[[str, str, tuple[str, ...]], bool] = lambda *_: False,
    log: Callable[[str], None] = lambda _: None,
) -> list[Record]:
    """Train (or reuse) and score each model x task of one variant; ``skip(model, task, settings)`` says the
    records already exist (resume), so neither training nor prediction runs for them."""
    out: list[Record] = []
    for model in models:
        for task in opts.tasks:
            if model == "gnn_naive" and task == "cross" and not opts.naive_cross:
                continue
            settings = TASKS[task][2]
            if skip(model, task, settings):
                continue
            run_dir = ensure_trained(opts, variant, model, task, log)
            for setting in settings:
                predict_setting(opts, variant, model, run_dir, setting)
                rec = score_setting(opts, variant, model, task, run_dir, setting, command)
                log(f"  {rec['variant']} {model} {setting}: EM {rec['EM']} (strict {rec['EM_strict']}) n={rec['n']}")
                out.append(rec)
    return out
