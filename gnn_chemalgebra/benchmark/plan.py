"""What ``gnnca bench run`` will do before it does anything: each cell run or skipped and why, the prerequisites it
needs (the built data, the presets, the edit model), and the CPU hours it will take at measured rates
(``rates.json`` beside this module says how each rate was measured).

``--dry-run`` prints the plan and writes nothing. A real run checks the same prerequisites first, so a missing one
is one line naming the command that makes it before any training starts; and it refuses to write into a results
folder that already holds records of the stages it runs unless ``--resume`` or ``--no-resume`` says what to do
with them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..data.layout import VARIANTS, split_files, variant_props, variant_short
from ..errors import InputError
from ..io import read_lines
from .gnn import TASKS, GnnOptions, budget_met, checkpoint_of, run_dir_of, shares_std, step_budget, test_limit
from .pipeline import (
    BenchOptions,
    ceilings_done,
    gnn_done,
    gnn_step_floor,
    resolve_variants,
    transformer_done,
    trivial_done,
)
from .records import load_records, read_marker
from .transformer import TransformerOptions
from .transformer import run_dir_of as tf_run_dir_of

RATES_FILE = Path(__file__).with_name("rates.json")
STAGE_RESULTS = {
    "ceilings": "ceilings",
    "trivial": "trivial",
    "gnn": "gnn",
    "naive": "gnn",
    "transformer": "transformer",
}
# test lines of the local build (gnnca data build --out built/full), for a plan made before the build exists
LOCAL_TEST_LINES = {"test_in": 17_822, "test_out": 17_822, "test_cross": 11_874}


@dataclass
class Cell:
    stage: str
    variant: str  # short name; "" for merge
    task: str  # std, cross or ""
    run: bool
    why: str
    hours: float = 0.0


@dataclass
class Prerequisite:
    what: str
    path: Path
    present: bool
    remedy: str  # what to do when it is missing: the command that makes it
    hours: float = 0.0


def load_rates(path: Path = RATES_FILE) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def held_records(opts: BenchOptions) -> list[str]:
    """The results files of the requested stages that already hold records under ``opts.out``."""
    names = sorted({STAGE_RESULTS[s] for s in opts.stages if s in STAGE_RESULTS})
    return [f"{n}.json" for n in names if load_records(opts.out / f"{n}.json")]


def refuse_held_records(opts: BenchOptions, resume: bool | None) -> None:
    """``resume`` None (neither --resume nor --no-resume): a results folder holding records is refused."""
    held = held_records(opts) if resume is None else []
    if held:
        raise InputError(
            f"holds benchmark records ({', '.join(held)}): pass --resume to keep them and run only what is missing, "
            "--no-resume to redo the named stages, or --out a new folder",
            path=str(opts.out),
        )


def _edit_remedy(path: str) -> str:
    """A checkpoint ``runs/<name>/best.pt`` of a preset ``configs/<name>.yaml`` is made by training that preset."""
    p = Path(path)
    if p.name in ("best.pt", "last.pt") and p.parent.parent == Path("runs"):
        return f"make it first with `gnnca train --config configs/{p.parent.name}.yaml`"
    return "make it first with `gnnca train --config configs/edits_cpu.yaml` and pass its runs/edits_cpu/best.pt"


def prerequisites(opts: BenchOptions, rates: dict[str, Any]) -> list[Prerequisite]:
    gopts = opts.gnn or GnnOptions(built=opts.built)
    topts = opts.transformer or TransformerOptions(built=opts.built)
    build = f"gnnca data build --out {opts.built}" + (" --extra" if "extra" in opts.built.name else "")
    out = []
    if set(opts.stages) - {"merge"}:  # merging reads only the records in --out
        out.append(Prerequisite("built data", opts.built, opts.built.is_dir(), f"make it first with `{build}`"))
    preset = "run from the repository root (its configs/ folder) or pass {} with a preset file"
    if "gnn" in opts.stages or "naive" in opts.stages or "transformer" in opts.stages:
        path = Path(gopts.config)
        out.append(Prerequisite("GNN preset", path, path.is_file(), preset.format("--config")))
    if "transformer" in opts.stages:
        path = Path(topts.config)
        out.append(Prerequisite("Transformer preset", path, path.is_file(), preset.format("--tf-config")))
    wants_smiles = any(variant_props(v)["repr"] == "smiles" for v in _variants(opts))
    if gopts.edit_checkpoint and "gnn" in opts.stages and wants_smiles:
        path = Path(gopts.edit_checkpoint)
        hours = rates["train_s_per_step"]["edits"]["value"] * rates["edit_model_steps"]["value"] / 3600
        out.append(Prerequisite("edit model", path, path.is_file(), _edit_remedy(gopts.edit_checkpoint), hours))
    return out


def check_prerequisites(opts: BenchOptions) -> None:
    """The first missing prerequisite as one line naming the command that makes it (before any work starts)."""
    for p in prerequisites(opts, load_rates()):
        if not p.present:
            raise InputError(f"{p.what} not found: {p.remedy}", path=str(p.path))


def _variants(opts: BenchOptions) -> list[str]:
    if opts.built.is_dir():
        return resolve_variants(opts.built, opts.variants, strict=False)
    short = {variant_short(v): v for v in VARIANTS}
    return [short[variant_short(n)] for n in opts.variants if variant_short(n) in short] or list(VARIANTS)


def _lines(built: Path, variant: str, setting: str, limit: int) -> int:
    src = split_files(built, variant, setting)[0]
    n = len(read_lines(src)) if src.exists() else LOCAL_TEST_LINES[setting]
    return min(n, limit) if limit else n


def _kind(variant: str) -> str:
    return "smiles" if variant_props(variant)["repr"] == "smiles" else "formula"


def _gnn_cell(opts: BenchOptions, rates: dict[str, Any], model: str, variant: str, task: str, have: list) -> Cell:
    gopts = opts.gnn or GnnOptions(built=opts.built)
    stage, settings = ("gnn" if model == "gnn" else "naive"), TASKS[task][2]
    short = variant_short(variant)
    if opts.resume is not False and gnn_done(have, gopts, model, variant, settings):
        return Cell(stage, short, task, False, f"records in {opts.out / 'gnn.json'}")
    key = "gnn_naive" if model == "gnn_naive" else f"gnn_{_kind(variant)}"
    steps, run_dir = step_budget(gopts, variant), run_dir_of(gopts, variant, model, task)
    lines = sum(_lines(opts.built, variant, s, test_limit(gopts, variant, model)) for s in settings)
    hours = lines / rates["predict_lines_per_s"][key]["value"] / 3600
    marker = read_marker(run_dir) if opts.resume is not False else None
    if shares_std(gopts, variant, task):
        why = "Type 1: the standard model serves, no training"
    elif marker is not None and checkpoint_of(run_dir).exists() and budget_met(marker, steps):
        why = f"finished run in {run_dir}, no training"
    else:
        done = int((marker or {}).get("step") or 0) if (run_dir / "last.pt").exists() else 0
        how = f"continue {run_dir} from step {done:,}" if done else f"train in {run_dir}"
        why = f"{how} to {steps:,} steps"
        hours += (steps - done) * rates["train_s_per_step"][key]["value"] / 3600
    return Cell(stage, short, task, True, f"{why}; predict {lines:,} lines", hours)


def _transformer_cell(opts: BenchOptions, rates: dict[str, Any], variant: str, task: str, have: list) -> Cell:
    gopts = opts.gnn or GnnOptions(built=opts.built)
    topts = opts.transformer or TransformerOptions(built=opts.built)
    floor = gnn_step_floor(load_records(opts.out / "gnn.json"), variant, task, topts.training_data)
    if floor is None and "gnn" in opts.stages:
        floor = step_budget(gopts, variant)
    steps, settings, short = max(topts.steps, floor or 0), TASKS[task][2], variant_short(variant)
    if opts.resume is not False and transformer_done(have, topts, variant, settings, steps):
        return Cell("transformer", short, task, False, f"records in {opts.out / 'transformer.json'}")
    limit = topts.limit_test_smiles if _kind(variant) == "smiles" else topts.limit_test
    lines = sum(_lines(opts.built, variant, s, limit) for s in settings)
    key = f"transformer_{_kind(variant)}"
    hours = (
        steps * rates["train_s_per_step"][key]["value"] / 3600
        + lines / rates["predict_lines_per_s"][key]["value"] / 3600
    )
    run_dir = tf_run_dir_of(topts, variant, task)
    return Cell(
        "transformer", short, task, True, f"train in {run_dir} to {steps:,} steps; predict {lines:,} lines", hours
    )


def plan_cells(opts: BenchOptions, rates: dict[str, Any]) -> list[Cell]:
    """Every cell of the requested stages, in the order the run takes them."""
    gopts = opts.gnn or GnnOptions(built=opts.built)
    keep = opts.resume is not False
    variants, cells = _variants(opts), []
    for stage, done in (("ceilings", ceilings_done), ("trivial", trivial_done)):
        if stage in opts.stages:
            have = load_records(opts.out / f"{stage}.json") if keep else []
            for v in variants:
                lines = sum(_lines(opts.built, v, s, 0) for s in LOCAL_TEST_LINES)
                hours = lines / rates["score_lines_per_s"][stage]["value"] / 3600
                skip = keep and done(have, v)
                why = f"records in {opts.out / f'{stage}.json'}" if skip else f"score {lines:,} test lines"
                cells.append(Cell(stage, variant_short(v), "", not skip, why, 0.0 if skip else hours))
    have = load_records(opts.out / "gnn.json") if keep else []
    for stage, model in (("gnn", "gnn"), ("naive", "gnn_naive")):
        if stage not in opts.stages:
            continue
        names = {variant_short(n) for n in opts.naive_variants}
        for v in variants if stage == "gnn" else [v for v in variants if variant_short(v) in names]:
            for task in gopts.tasks:
                if model == "gnn_naive" and task == "cross" and not gopts.naive_cross:
                    continue
                cells.append(_gnn_cell(opts, rates, model, v, task, have))
    if "transformer" in opts.stages:
        have = load_records(opts.out / "transformer.json") if keep else []
        topts = opts.transformer or TransformerOptions(built=opts.built)
        cells += [_transformer_cell(opts, rates, v, t, have) for v in variants for t in topts.tasks]
    if "merge" in opts.stages:
        cells.append(Cell("merge", "", "", True, f"tables and plot from the records in {opts.out}"))
    return cells


def _hours(h: float) -> str:
    return f"{h:.2f}" if h < 1 else f"{h:.1f}"


def format_plan(opts: BenchOptions, rates: dict[str, Any] | None = None) -> str:
    """The dry run's report: prerequisites, one line per cell, the estimate and where its rates come from."""
    rates = rates or load_rates()
    pre, cells = prerequisites(opts, rates), plan_cells(opts, rates)
    lines = [
        "gnnca bench run --dry-run: nothing is trained or written.",
        "",
        "Prerequisites (checked before anything runs):",
    ]
    for p in pre:
        state = "present" if p.present else f"MISSING: {p.remedy}"
        cost = f" (~{p.hours:.2f} CPU h)" if not p.present and p.hours else ""
        lines.append(f"  {p.what}: {p.path}: {state}{cost}")
    lines += ["", "Cells:"]
    for c in cells:
        name = " ".join(x for x in (c.stage, c.variant, c.task) if x)
        cost = f" (~{c.hours:.2f} CPU h)" if c.run and c.hours >= 0.005 else ""
        lines.append(f"  {name}: {'run' if c.run else 'skip'}: {c.why}{cost}")
    missing = sum(p.hours for p in pre if not p.present)
    total = sum(c.hours for c in cells) + missing
    n_run = sum(c.run for c in cells)
    lines += [
        "",
        f"Estimate: {_hours(total)} CPU hours (one thread per run) for {n_run} of {len(cells)} cells"
        + (f", {_hours(missing)} of them for missing prerequisites" if missing else "")
        + "; the data build is not counted.",
        f"Rates: {RATES_FILE.name} in the package ({rates['about']})",
    ]
    return "\n".join(lines)
