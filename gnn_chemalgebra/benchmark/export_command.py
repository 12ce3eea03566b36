"""The options of ``gnnca bench export``; the work is in :mod:`.export`."""

from __future__ import annotations

from pathlib import Path

import typer

from .command_io import log_line


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
    identity_min_count: int = typer.Option(
        0,
        "--identity-min-count",
        min=0,
        help="Keep only the identity rows (model.identity_min_count) of molecules found in at least this many of "
        "the run's training lines: a fine-tune of a model with many rows ships smaller. 0 keeps them all.",
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
    export_model(run_dir, recs, to, edit_to, card, log=log_line, decode=decode, identity_min_count=identity_min_count)
