"""The benchmark's stages in order, each resumable, each saving its records as soon as a unit of work finishes.

Stages and the results file each one updates under ``out``:

- ``ceilings``: oracle / exact Bayes ceiling of every test setting -> ``ceilings.json``
- ``trivial``: copy-the-source and the Type-1 shortcut -> ``trivial.json``
- ``gnn``: the bag GNN, standard and cross models -> ``gnn.json``
- ``naive``: the same network with a head reading raw coefficients (the ablation) -> ``gnn.json``
- ``transformer``: the sequence baseline, at least the GNN's steps per cell -> ``transformer.json``
- ``merge``: prefix ceilings for rows scored on fewer lines, then ``benchmark.json``, ``benchmark_table.md``,
  ``gnn_table.md``, ``gnn_errors.md``, ``benchmark.png`` (and the tables of a Markdown page with ``readme``)

Resuming (the default) skips every record already in its results file and continues interrupted training
from ``last.pt``; without it the named stages recompute their records and retrain from scratch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..config import load_config
from ..data.layout import VARIANTS, variant_short
from ..errors import InputError
from ..io import atomic_write_text
from .ceilings import add_prefix_ceilings, ceiling_records
from .errors import error_table, keep_missing_rows
from .gnn import TASKS, GnnOptions, budget_met, gnn_records, step_budget
from .merge import STAGE_FILES, merged_records, write_outputs
from .records import CEILING_MODELS, LOCAL, Key, Record, has_all, load_records, record_key, update_records
from .transformer import TransformerOptions, finished, transformer_records
from .trivial import trivial_records

STAGES: tuple[str, ...] = ("ceilings", "trivial", "gnn", "naive", "transformer", "merge")
NAIVE_VARIANTS: tuple[str, ...] = ("F_T1_x1", "F_T2_x1")


@dataclass
class BenchOptions:
    built: Path
    out: Path = Path("results")
    stages: tuple[str, ...] = STAGES
    variants: tuple[str, ...] = ()  # short names; () = all eight present in ``built``
    naive_variants: tuple[str, ...] = NAIVE_VARIANTS
    resume: bool = True
    readme: Path | None = None
    command: str = "gnnca bench run"
    gnn: GnnOptions | None = None
    transformer: TransformerOptions | None = None
    log: Callable[[str], None] = field(default=lambda _: None)


def resolve_variants(built: Path, names: Sequence[str], strict: bool = True) -> list[str]:
    """Full variant names: the ones asked for (each must exist when ``strict``), or every variant in ``built``."""
    known = {variant_short(v): v for v in VARIANTS}
    for n in names:
        if variant_short(n) not in known:
            raise InputError(f"unknown variant {n!r} (one of {', '.join(known)})")
    wanted = [known[variant_short(n)] for n in names] if names else list(VARIANTS)
    present = [v for v in wanted if (built / v).is_dir()]
    missing = [v for v in wanted if v not in present and names and strict]
    if missing:
        raise InputError(f"variant folder missing: {missing[0]}", path=str(built))
    return present


def _keys(model: str, variant: str, settings: Sequence[str], training_data: str) -> list[Key]:
    return [(model, variant_short(variant), s, training_data) for s in settings]


def gnn_step_floor(gnn: list[Record], variant: str, task: str, training_data: str) -> int | None:
    """The GNN's optimiser steps on a cell (the floor of the Transformer's budget there), from the GNN records of
    the same training data only: a GNN trained on the extra data (tens of thousands of steps) sets no floor for a
    Transformer trained on the local reactions."""
    steps = [
        r.get("train_steps") or 0
        for r in gnn
        if r["model"] == "gnn"
        and r["variant"] == variant_short(variant)
        and r["setting"] in TASKS[task][2]
        and (r.get("training_data") or LOCAL) == training_data
    ]
    return max(steps) if steps else None


def ceilings_done(have: list[Record], variant: str) -> bool:
    return any(r["variant"] == variant_short(variant) and r["model"] in CEILING_MODELS for r in have)


def trivial_done(have: list[Record], variant: str) -> bool:
    return any(r["variant"] == variant_short(variant) for r in have)


def gnn_done(have: list[Record], gopts: GnnOptions, model: str, variant: str, settings: tuple[str, ...]) -> bool:
    """Every record of the cell exists, and each run that stopped at its step budget met today's (a larger
    --steps continues a run that stopped at its budget, and scores it again; records from before the stop
    reason was kept count as finished, as they did)."""
    keys = set(_keys(model, variant, settings, gopts.training_data))
    recs = [r for r in have if record_key(r) in keys]
    budget = step_budget(gopts, variant)
    return has_all(have, keys) and all(
        "stop_reason" not in r or budget_met({"step": r.get("train_steps") or 0, **r}, budget) for r in recs
    )


def transformer_done(
    have: list[Record], topts: TransformerOptions, variant: str, settings: tuple[str, ...], steps: int
) -> bool:
    keys = set(_keys(topts.model_name, variant, settings, topts.training_data))
    recs = [r for r in have if record_key(r) in keys]
    return len(recs) == len(keys) and all(
        finished({**r.get("train", {}), "step": r.get("steps", 0)}, steps) for r in recs
    )


def check_stages(opts: BenchOptions, need_built: bool = True) -> list[str]:
    """The stages known and the built folder present (when a stage reads it and ``need_built``); returns the
    variants to run."""
    unknown = [s for s in opts.stages if s not in STAGES]
    if unknown:
        raise InputError(f"unknown stage {unknown[0]!r} (stages: {', '.join(STAGES)})")
    if need_built and not opts.built.is_dir() and any(s != "merge" for s in opts.stages):
        raise InputError("built data folder not found (gnnca data build --out ...)", path=str(opts.built))
    return resolve_variants(opts.built, opts.variants) if opts.built.is_dir() else []


def run_stages(opts: BenchOptions) -> list[Record]:
    """Run the requested stages; returns the merged records when ``merge`` ran, else the empty list."""
    variants = check_stages(opts)
    out, log = opts.out, opts.log
    out.mkdir(parents=True, exist_ok=True)
    gopts = opts.gnn or GnnOptions(built=opts.built)
    gopts.resume = opts.resume
    if "ceilings" in opts.stages:
        have = load_records(out / "ceilings.json") if opts.resume else []
        for v in variants:
            if not ceilings_done(have, v):
                have = update_records(out / "ceilings.json", ceiling_records(opts.built, v))
                log(f"ceilings {variant_short(v)}: done")
    if "trivial" in opts.stages:
        have = load_records(out / "trivial.json") if opts.resume else []
        todo = [v for v in variants if not trivial_done(have, v)]
        update_records(out / "trivial.json", trivial_records(opts.built, todo, opts.command, log))
    for stage, model in (("gnn", "gnn"), ("naive", "gnn_naive")):
        if stage not in opts.stages:
            continue
        names = opts.variants if stage == "gnn" else opts.naive_variants  # the ablation: where its folder exists
        for v in resolve_variants(opts.built, names, strict=stage == "gnn") if names else variants:
            have = load_records(out / "gnn.json") if opts.resume else []

            def done(model: str, task: str, settings: tuple[str, ...], v: str = v, have: list = have) -> bool:
                return gnn_done(have, gopts, model, v, settings)

            update_records(out / "gnn.json", gnn_records(gopts, v, [model], opts.command, done, log))
    if "transformer" in opts.stages:
        topts = opts.transformer or TransformerOptions(built=opts.built)
        topts.resume = opts.resume
        if not topts.batch_size:  # the GNN's batch size in reactions, so both see the same data per step
            topts.batch_size = int(load_config(gopts.config, gopts.overrides)["train"]["batch_size"])
        gnn = load_records(out / "gnn.json")
        for v in variants:
            have = load_records(out / "transformer.json") if opts.resume else []

            def tf_done(task: str, settings: tuple[str, ...], steps: int, v: str = v, have: list = have) -> bool:
                return transformer_done(have, topts, v, settings, steps)

            def gnn_steps(variant: str, task: str) -> int | None:
                return gnn_step_floor(gnn, variant, task, topts.training_data)

            update_records(
                out / "transformer.json", transformer_records(topts, v, opts.command, gnn_steps, tf_done, log)
            )
    if "merge" not in opts.stages:
        return []
    if not any((out / f"{name}.json").exists() for name in STAGE_FILES):
        raise InputError(f"no results to merge ({', '.join(n + '.json' for n in STAGE_FILES)})", path=str(out))
    if opts.built.is_dir():  # the ceiling of each prefix a GNN row was scored on (SMILES rows, the ablation)
        if changed := add_prefix_ceilings(merged_records(out), opts.built):
            update_records(out / "ceilings.json", changed)
    if gopts.runs.is_dir():
        run_names = [(f"gnn_{task}", TASKS[task][2]) for task in gopts.tasks]
        table, path = error_table(gopts.runs, run_names), out / "gnn_errors.md"
        if path.exists():  # rows of variants whose run folders are not here stay as they were
            table = keep_missing_rows(path.read_text(encoding="utf-8"), table)
        atomic_write_text(path, table)
    return write_outputs(out, opts.readme, log)
