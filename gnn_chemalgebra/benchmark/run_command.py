"""The options of ``gnnca bench run``: every stage of the benchmark; the work is in :mod:`.pipeline`."""

from __future__ import annotations

from pathlib import Path

import typer

from .command_io import invocation, log_line, split_list

ALL_STAGES = "ceilings,trivial,gnn,naive,transformer,merge"  # pipeline.STAGES, literal: no import at start-up
RUN_HELP = """Train, predict and score every model on every variant; write records, tables, plot.

Stages (--stages, comma-separated; they run in this order):

\b
ceilings     oracle / exact Bayes ceiling per test setting -> ceilings.json
trivial      copy-the-source and Type-1 shortcut baselines -> trivial.json
gnn          bag GNN: standard model (test_in, test_out),
             cross model (train_cross -> test_cross)       -> gnn.json
naive        the same network reading raw coefficients     -> gnn.json
transformer  sequence baseline, max(--tf-steps, GNN steps) -> transformer.json
merge        prefix ceilings; benchmark.json, benchmark_table.md,
             gnn_table.md, gnn_errors.md, benchmark.png (+ --readme)

Files go to --out. Budgets are optimiser steps, never wall-clock minutes.

--dry-run prints the plan and writes nothing: each cell run or skipped and
why, the prerequisites (built data, presets, --edit-checkpoint) and the CPU
hours at measured rates. A missing prerequisite stops the run, one line naming
the command that makes it, before anything trains.

--resume: a record already in its results file is skipped; a finished run
folder (RUNS/<variant>/<model>_<task>/DONE) is reused, an interrupted one
continues from last.pt, and complete prediction files are re-scored, not
recomputed. --no-resume redoes the named stages from scratch. Neither: an
--out folder that holds records of the named stages is refused.
Every record carries the command that produced it.

\b
Examples:
gnnca bench run --built built/full --out results/mine --dry-run
gnnca bench run --built built/full --out results/mine
gnnca bench run --stages gnn,merge --variants F_T1_x1 --steps 500
gnnca bench run --stages merge --readme experiments/comparison.md
"""


def run(
    ctx: typer.Context,
    built: Path = typer.Option(Path("built/full"), "--built", help="Built data folder (gnnca data build --out)."),
    out: Path = typer.Option(Path("results"), "--out", help="Folder of the results files."),
    runs: Path = typer.Option(Path("runs/bench"), "--runs", help="Run folders of the GNN stages."),
    stages: str = typer.Option(ALL_STAGES, "--stages", help="Comma-separated stages (see above)."),
    variants: str = typer.Option("", "--variants", help="Comma-separated short names, e.g. F_T1_x1 (all)."),
    naive_variants: str = typer.Option("F_T1_x1,F_T2_x1", "--naive-variants", help="Variants of the ablation."),
    resume: bool | None = typer.Option(
        None, "--resume/--no-resume", help="Keep finished records and runs, or redo them (see above)."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan and its cost; run nothing."),
    readme: Path = typer.Option(None, "--readme", help="merge: also update the tables between its markers."),
    config: str = typer.Option("configs/gnn_bench.yaml", "--config", help="GNN preset."),
    steps: int = typer.Option(4000, "--steps", help="GNN optimiser steps per run (formula variants)."),
    steps_smiles: int = typer.Option(2500, "--steps-smiles", help="GNN optimiser steps per run (SMILES)."),
    tasks: str = typer.Option("std,cross", "--tasks", help="std (train -> test_in/out), cross (-> test_cross)."),
    limit_test: int = typer.Option(0, "--limit-test", help="Score the first N lines of each test set (0 = all)."),
    limit_test_smiles: int = typer.Option(2000, "--limit-test-smiles", help="SMILES: first N test lines."),
    naive_limit: int = typer.Option(3000, "--naive-limit", help="Ablation: first N test lines (0 = all)."),
    edit_checkpoint: str = typer.Option(
        "",
        "--edit-checkpoint",
        help="SMILES: the bond-edit model paired in validation (default: none, no product graphs there; the "
        "test predictions use the bundled edit_default.pt).",
    ),
    val_limit_smiles: int = typer.Option(500, "--val-limit-smiles", help="SMILES: validation lines."),
    beam_smiles: int = typer.Option(5, "--beam-smiles", help="SMILES: hypotheses kept (main top-k)."),
    t1_cross_from_std: bool = typer.Option(
        True, "--t1-cross-from-std/--t1-cross-trained", help="Type 1: the standard model gives test_cross."
    ),
    training_data: str = typer.Option("local", "--training-data", help="Label of the training data."),
    threads: int = typer.Option(1, "--threads", help="CPU threads per training run."),
    set_: list[str] = typer.Option([], "--set", help="GNN config override key=value (repeatable)."),
    tf_config: str = typer.Option("configs/transformer_steps.yaml", "--tf-config", help="Transformer preset."),
    tf_steps: int = typer.Option(5000, "--tf-steps", help="Transformer steps (at least the GNN's on the cell)."),
    tf_limit_test: int = typer.Option(0, "--tf-limit-test", help="Transformer: first N formula lines (0: all)."),
    tf_limit_test_smiles: int = typer.Option(2000, "--tf-limit-test-smiles", help="Transformer: first N SMILES."),
    tf_beam: int = typer.Option(1, "--tf-beam", help="Transformer decoding beam (1 = greedy)."),
    tf_tokenizer: str = typer.Option(
        "",
        "--tf-tokenizer",
        "--tokenizer",
        help="Transformer coefficients: paper ({k} one token) or digit ({, digits, }; records transformer_digit); "
        "default: the preset's model.tokenizer.",
    ),
    tf_model: str = typer.Option("transformer", "--tf-model", help="Record model name, e.g. transformer_digit."),
    tf_runs: Path = typer.Option(Path("runs"), "--tf-runs", help="Parent of the Transformer run folders."),
    tf_set: list[str] = typer.Option([], "--tf-set", help="Transformer config override (repeatable)."),
) -> None:
    from .gnn import GnnOptions
    from .pipeline import BenchOptions, check_stages, run_stages
    from .plan import check_prerequisites, format_plan, refuse_held_records
    from .transformer import TransformerOptions

    keep = resume is not False
    common = {"built": built, "threads": threads, "training_data": training_data, "resume": keep}
    gnn = GnnOptions(
        runs=runs, config=config, steps=steps, steps_smiles=steps_smiles, tasks=split_list(tasks),
        t1_cross_from_std=t1_cross_from_std, limit_test=limit_test, limit_test_smiles=limit_test_smiles,
        naive_limit=naive_limit, edit_checkpoint=edit_checkpoint, val_limit_smiles=val_limit_smiles,
        beam_smiles=beam_smiles, overrides=list(set_), **common,  # type: ignore[arg-type]
    )  # fmt: skip
    tf = TransformerOptions(
        runs=tf_runs, config=tf_config, steps=tf_steps, limit_test=tf_limit_test, beam=tf_beam,
        limit_test_smiles=tf_limit_test_smiles,
        tokenizer=tf_tokenizer, model_name=tf_model, tasks=split_list(tasks), overrides=list(tf_set), **common,  # type: ignore[arg-type]
    )  # fmt: skip
    opts = BenchOptions(
        built=built, out=out, stages=split_list(stages), variants=split_list(variants),
        naive_variants=split_list(naive_variants), resume=keep, readme=readme, command=invocation(ctx),
        gnn=gnn, transformer=tf, log=log_line,
    )  # fmt: skip
    check_stages(opts, need_built=not dry_run)
    refuse_held_records(opts, resume)
    if dry_run:
        typer.echo(format_plan(opts))
        return
    check_prerequisites(opts)
    records = run_stages(opts)
    if records:
        typer.echo((out / "benchmark_table.md").read_text(encoding="utf-8"))
