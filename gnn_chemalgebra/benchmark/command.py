"""``gnnca bench``: the benchmark's sub-commands (run the stages, export a bundled model, check predictions, the
edit model on its own). Options only; the work is in the modules beside this one."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

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


def _split(value: str) -> tuple[str, ...]:
    return tuple(v for v in value.split(",") if v)


def _emit(table: str, result: Any, json_out: Path | None) -> None:
    """The readable table on stdout; the measurements as JSON too when asked."""
    from ..io import atomic_write_json

    typer.echo(table)
    if json_out is not None:
        atomic_write_json(json_out, result)


def _command(ctx: typer.Context) -> str:
    """The invocation as typed when it came from the ``gnnca`` script, else rebuilt from the options that differ
    from their defaults (tests, ``python -m``)."""
    if Path(sys.argv[0]).name == "gnnca":
        return "gnnca " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    parts = ["gnnca", *ctx.command_path.split()[1:]]
    for p in ctx.command.params:
        value = ctx.params.get(p.name or "")
        if p.name == "ctx" or value == p.default or (isinstance(value, (list, tuple)) and not value):
            continue
        if getattr(p, "is_flag", False):
            parts.append(p.opts[0] if value else p.secondary_opts[0])
            continue
        for v in value if isinstance(value, (list, tuple)) else [value]:
            parts += [p.opts[0], shlex.quote(str(v))]
    return " ".join(parts)


VARIANT_HELP = "Variant folder (short or long name, e.g. F_T1_x1)."


def build_bench_app(wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> typer.Typer:
    """The sub-app; ``wrap`` turns the project's errors into the CLI's one-line messages."""
    bench = typer.Typer(help="The benchmark: stages, records, tables, plot, bundled models.", no_args_is_help=True)

    @bench.command("run", help=RUN_HELP)
    @wrap
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
            runs=runs, config=config, steps=steps, steps_smiles=steps_smiles, tasks=_split(tasks),
            t1_cross_from_std=t1_cross_from_std, limit_test=limit_test, limit_test_smiles=limit_test_smiles,
            naive_limit=naive_limit, edit_checkpoint=edit_checkpoint, val_limit_smiles=val_limit_smiles,
            beam_smiles=beam_smiles, overrides=list(set_), **common,  # type: ignore[arg-type]
        )  # fmt: skip
        tf = TransformerOptions(
            runs=tf_runs, config=tf_config, steps=tf_steps, limit_test=tf_limit_test, beam=tf_beam,
            limit_test_smiles=tf_limit_test_smiles,
            tokenizer=tf_tokenizer, model_name=tf_model, tasks=_split(tasks), overrides=list(tf_set), **common,  # type: ignore[arg-type]
        )  # fmt: skip
        opts = BenchOptions(
            built=built, out=out, stages=_split(stages), variants=_split(variants),
            naive_variants=_split(naive_variants), resume=keep, readme=readme, command=_command(ctx),
            gnn=gnn, transformer=tf, log=lambda m: typer.echo(m, err=True),
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

    @bench.command("export")
    @wrap
    def export(
        to: Path = typer.Option(..., "--to", help="Destination checkpoint, e.g. gnn_chemalgebra/checkpoints/x.pt."),
        variant: str = typer.Option("", "--variant", help="Short name of the bench run to export, e.g. F_T1_x5."),
        run: Path = typer.Option(
            None, "--run", help="Any training run folder instead (its best.pt), e.g. one of `gnnca train`."
        ),
        runs: Path = typer.Option(Path("runs/bench"), "--runs", help="Run folders of the GNN stage."),
        results: Path = typer.Option(Path("results/gnn.json"), "--results", help="Records of the GNN stage."),
        task: str = typer.Option("std", "--task", help="std or cross run folder."),
        edit_to: Path = typer.Option(None, "--edit-to", help="SMILES: also the edit model it decodes with."),
        card: Path = typer.Option(None, "--card", help="Write a generated model card here."),
        decode: list[str] = typer.Option(
            [],
            "--set",
            help="Decode setting saved into the copy, decode.key=value (repeatable), e.g. "
            "decode.type1_model=gnn_type1_default.pt: a checkpoint beside it reads the Type-1 lines.",
        ),
    ) -> None:
        """Slim copy of a run's best checkpoint (no optimiser state) with its test metrics (bench records of
        --variant, if any) and, with --set, the decode settings it predicts with by default."""
        from ..errors import InputError
        from .export import export_model
        from .records import load_records

        if not variant and run is None:
            raise InputError("gnnca bench export: give --variant (a bench run) or --run (any run folder)")
        recs = []
        if variant and results.exists():
            recs = [r for r in load_records(results) if r["model"] == "gnn" and r["variant"] == variant]
        run_dir = run if run is not None else runs / variant / f"gnn_{task}"
        export_model(run_dir, recs, to, edit_to, card, log=lambda m: typer.echo(m, err=True), decode=decode)

    @bench.command("check")
    @wrap
    def check(
        runs: Path = typer.Option(Path("runs/bench"), "--runs", help="Run folders with pred-<setting>.txt files."),
        built: Path = typer.Option(Path("built/full"), "--built", help="Built data folder (the sources)."),
        naive: bool = typer.Option(False, "--naive", help="Also the naive ablation (it writes unbalanced lines)."),
    ) -> None:
        """Every prediction file: each molecule parses and each line balances against its source (exit 1 if not)."""
        from .checks import GNN_RUNS, NAIVE_RUNS, check_runs, checks_table

        rows = check_runs(runs, built, GNN_RUNS + NAIVE_RUNS if naive else GNN_RUNS)
        typer.echo(checks_table(rows))
        if any(r.balanced != r.lines for r in rows):
            raise typer.Exit(1)

    @bench.command("edits")
    @wrap
    def edits(
        config: Path = typer.Option(Path("configs/edits_cpu.yaml"), "--config", help="Edit-model preset."),
        set_: list[str] = typer.Option([], "--set", help="Config override key=value (repeatable)."),
        checkpoint: Path = typer.Option(None, "--checkpoint", help="Default: <run_dir>/best.pt (trained if missing)."),
        train_first: bool = typer.Option(False, "--train", help="Train even if the checkpoint exists."),
        split: str = typer.Option("test", "--split", help="USPTO-BAL split."),
        limit: int = typer.Option(2000, "--limit", help="First N reactions (0 = all)."),
        beam: int = typer.Option(5, "--beam", help="Edit-model beam: candidates per reaction (top-5 needs 5)."),
        out: Path = typer.Option(Path("results/edits.json"), "--out", help="Report (JSON)."),
    ) -> None:
        """The bond-edit model on USPTO-BAL reactions: main products top-1/top-5, validity, balance, speed."""
        import json

        from ..config import load_config
        from ..io import atomic_write_json
        from .edits import edit_benchmark

        report = edit_benchmark(load_config(config, set_), checkpoint, split, limit, beam, train_first=train_first)
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(out, report)
        keys = ("n", "top1", "top5", "valid_top1", "balanced_top1", "reactions_per_s")
        typer.echo(json.dumps({k: report["metrics"][k] for k in keys}))

    @bench.command("speed")
    @wrap
    def speed(
        ctx: typer.Context,
        built: Path = typer.Option(Path("built/full"), "--built", help="Built data folder."),
        variant: str = typer.Option("ChemAlgebra_F_T1_x1", "--variant", help=VARIANT_HELP),
        train_lines: int = typer.Option(2000, "--train-lines", help="Lines of the one-epoch training runs."),
        predict_lines: int = typer.Option(300, "--predict-lines", help="test_in lines predicted."),
        repeats: int = typer.Option(3, "--repeats", help="Interleaved repeats (medians reported)."),
        threads: int = typer.Option(1, "--threads", help="CPU threads of each timed run (the same for both models)."),
        gnn_config: str = typer.Option("configs/gnn_cpu.yaml", "--gnn-config", help="GNN preset timed."),
        tf_config: str = typer.Option("configs/transformer_cpu.yaml", "--tf-config", help="Transformer preset timed."),
        gnn_checkpoint: Path = typer.Option(None, "--gnn-checkpoint", help="Trained GNN to time prediction with."),
        tf_checkpoint: Path = typer.Option(None, "--tf-checkpoint", help="Trained Transformer to time prediction."),
        json_out: Path = typer.Option(None, "--json", help="Also write the measurements here."),
    ) -> None:
        """GNN vs Transformer training and prediction speed, side by side in one run (medians, ratios)."""
        from .speed import SpeedOptions, measure_speed, speed_table

        opts = SpeedOptions(
            built, variant, train_lines, predict_lines, repeats, threads, gnn_config, tf_config,
            gnn_checkpoint, tf_checkpoint,
        )  # fmt: skip
        res = measure_speed(opts, log=lambda m: typer.echo(m, err=True))
        _emit(speed_table(res), {"command": _command(ctx), **res}, json_out)

    @bench.command("gpu")
    @wrap
    def gpu(
        built: Path = typer.Option(Path("built/full"), "--built", help="Built data folder."),
        variant: str = typer.Option("ChemAlgebra_F_T1_x5", "--variant", help=VARIANT_HELP),
        config: str = typer.Option("configs/gnn_cpu.yaml", "--config", help="GNN preset."),
        lines: int = typer.Option(20000, "--lines", help="First N training lines."),
        epochs: int = typer.Option(2, "--epochs", help="Training epochs of each run (fp32, bf16, CPU)."),
        tol: float = typer.Option(0.05, "--tol", help="Relative tolerance, bf16 vs fp32 final loss."),
        json_out: Path = typer.Option(None, "--json", help="Also write the rows here."),
    ) -> None:
        """bf16 vs fp32 on CUDA vs the CPU: training speed and loss side by side (exit 1 if bf16 drifts)."""
        from .gpu import GpuOptions, gpu_check, gpu_table

        res = gpu_check(GpuOptions(built, variant, config, lines, epochs=epochs, tol=tol))
        _emit(gpu_table(res), res, json_out)
        if not res["mixed_precision_ok"]:
            raise typer.Exit(1)

    @bench.command("memory")
    @wrap
    def memory(
        built: Path = typer.Option(Path("built/full"), "--built", help="Built data folder (training points)."),
        variant: str = typer.Option("ChemAlgebra_F_T1_x5", "--variant", help=VARIANT_HELP),
        build_limits: str = typer.Option(
            "1000,3000,6000", "--build-limits", help="Reactions per MIT split ('' = none)."
        ),
        train_lines: str = typer.Option("2000,6000,12000", "--train-lines", help="Training lines per point."),
        lazy: bool = typer.Option(False, "--lazy", help="Train with data.lazy=true (bags featurised on access)."),
        config: str = typer.Option("configs/gnn_cpu.yaml", "--config", help="GNN preset."),
        json_out: Path = typer.Option(None, "--json", help="Also write the measurements here."),
    ) -> None:
        """Peak memory of the builder and of one training epoch at several sizes, extrapolated to the paper's."""
        from .memory import measure_memory, memory_table

        res = measure_memory(
            built, variant, [int(x) for x in _split(build_limits)], [int(x) for x in _split(train_lines)], lazy,
            config, log=lambda m: typer.echo(m, err=True),
        )  # fmt: skip
        _emit(memory_table(res), res, json_out)

    @bench.command("ceiling-approx")
    @wrap
    def ceiling_approx(
        built: Path = typer.Option(Path("built/full"), "--built", help="Built data folder (uspto_bal/reactions-test)."),
        seed: int = typer.Option(0, "--seed", help="Seed of the one draw per reaction."),
    ) -> None:
        """The benchmark page's Type-2 ceiling estimate (shared strings ignored) beside which ours is exact."""
        import json
        import random

        from ..errors import InputError
        from .ceilings import approx_ceiling_without_shared_strings

        path = built / "uspto_bal" / "reactions-test.jsonl"
        if not path.exists():
            raise InputError("no USPTO-BAL test reactions (gnnca data build --out ...)", path=str(path))
        recs = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        rng = random.Random(seed)
        for name, coef_set in (("in", (1, 2, 3, 4, 5)), ("out", (6, 7, 8, 9, 10))):
            for rule in ("all", "RP"):
                typer.echo(
                    f"{name} {rule} {round(approx_ceiling_without_shared_strings(recs, coef_set, rule, rng), 2)}"
                )

    @bench.command("edit-labels")
    @wrap
    def edit_labels(
        data: Path = typer.Option(..., "--data", help="A built dataset (gnnca data build --out)."),
        split: str = typer.Option("train", "--split", help="train | valid | test"),
        limit: int = typer.Option(0, "--limit", help="Only the first N reactions (0 = all)."),
        source: str = typer.Option("all", "--source", help="Records of one source: uspto_mit, uspto_full, all."),
        labels_only: bool = typer.Option(False, "--labels-only", help="Skip the (slow) leftover-chain rules."),
    ) -> None:
        """Gold bond-edit labels re-applied to the reactants, and three leftover-chain rules, on USPTO-BAL."""
        import json

        from ..errors import InputError
        from .edit_labels import label_markdown, label_report

        if split not in ("train", "valid", "test"):
            raise InputError(f"--split must be train, valid or test, got {split!r}")
        path = data / "uspto_bal" / f"reactions-{split}.jsonl"
        if not path.exists():
            raise InputError("no USPTO-BAL reactions file (gnnca data build --out ...)", path=str(path))
        report = label_report(path, limit or None, source, not labels_only)
        typer.echo(label_markdown(report, f"{split} ({source})"))
        typer.echo("JSON " + json.dumps({"split": split, "source": source, **report}, sort_keys=True))

    @bench.command("decode-ablation")
    @wrap
    def decode_ablation_cmd(
        checkpoint: Path = typer.Option(
            ..., "--checkpoint", help="A trained GNN, e.g. runs/bench/F_T2_x1/gnn_std/best.pt."
        ),
        built: Path = typer.Option(Path("built/full"), "--built", help="Built data folder."),
        variant: str = typer.Option(..., "--variant", help="e.g. ChemAlgebra_F_T2_x1."),
        settings: str = typer.Option("valid,test_in,test_out", "--settings", help="Comma-separated splits."),
        limit: int = typer.Option(2000, "--limit", help="First N lines of each split (0 = all)."),
        json_out: Path = typer.Option(None, "--json", help="Also write the rows here."),
    ) -> None:
        """The decoder's options (coefficient evidence, closed-shell check) off and on, EM side by side."""
        from .ablation import ablation_table, decode_ablation

        rows = decode_ablation(checkpoint, built, variant, _split(settings), limit)
        _emit(ablation_table(rows), {"checkpoint": str(checkpoint), "variant": variant, "rows": rows}, json_out)

    @bench.command("curves")
    @wrap
    def curves(
        run: list[str] = typer.Option(
            ...,
            "--run",
            help="Run folder (its metrics.jsonl) or a saved rows .jsonl: DIR, LABEL=DIR, or PANEL|LABEL=DIR for a "
            "grid with one panel per cell; repeat.",
        ),
        out: Path = typer.Option(Path("results/transformer_curves.png"), "--out", help="PNG to write."),
        title: str = typer.Option("", "--title", help="Figure title."),
        save_rows_to: Path = typer.Option(
            None, "--save-rows", help="Also keep each run's validation rows here (small .jsonl files to redraw from)."
        ),
    ) -> None:
        """Validation EM and token accuracy against optimiser steps of Transformer and GNN runs (one PNG).

        Without panels: EM of every run beside the Transformer runs' token accuracy. With PANEL|LABEL=DIR specs:
        one panel per cell, EM and token accuracy of its runs together.
        """
        import json

        from .curves import curves_summary, parse_panel_spec, plot_curve_grid, plot_curves, read_curve, save_rows

        curves = [read_curve(path, label, panel) for panel, label, path in map(parse_panel_spec, run)]
        if any(c.panel for c in curves):
            plot_curve_grid(curves, out, title)
        else:
            plot_curves(curves, out, title)
        for c, row in zip(curves, curves_summary(curves), strict=True):
            if save_rows_to is not None:
                row["rows_file"] = str(save_rows(c, save_rows_to))
            typer.echo(json.dumps({"panel": c.panel, **row} if c.panel else row))
        typer.echo(f"wrote {out}", err=True)

    @bench.command("roles")
    @wrap
    def roles_cmd(
        ctx: typer.Context,
        checkpoint: Path = typer.Option(
            Path("gnn_chemalgebra/checkpoints/gnn_default.pt"), "--checkpoint", help="A trained GNN checkpoint."
        ),
        built: Path = typer.Option(Path("built/full"), "--built", help="Built data folder."),
        variants: str = typer.Option("F_T1_x5,F_T2_x1", "--variants", help="Comma-separated variants."),
        split: str = typer.Option("test_in", "--split", help="Split of each variant."),
        limit: int = typer.Option(2000, "--limit", help="First N lines of each split (0 = all)."),
        out: Path = typer.Option(Path("results"), "--out", help="Writes role_metrics.json/.md, role_calibration.png."),
    ) -> None:
        """The role head per role (precision / recall / F1, confusion matrix) and its calibration (PNG)."""
        from .roles import role_report, write_role_report

        log = lambda m: typer.echo(m, err=True)  # noqa: E731
        res = role_report(checkpoint, built, _split(variants), split, limit or None, log=log)
        res["command"] = _command(ctx)
        for path in write_role_report(res, out):
            typer.echo(path)

    from .calibration_command import add_calibration_command
    from .compact import add_compact_command
    from .conformal_command import add_conformal_command
    from .textbook_command import register_textbook

    register_textbook(bench, wrap, _command)
    add_calibration_command(bench, wrap, _command, _split)
    add_compact_command(bench, wrap)
    add_conformal_command(bench, wrap, _command)
    return bench
