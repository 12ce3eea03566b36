"""The options of ``gnnca bench speed``; the work is in :mod:`.speed`."""

from __future__ import annotations

from pathlib import Path

import typer

from .command_io import VARIANT_HELP, emit, invocation, log_line


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
    res = measure_speed(opts, log=log_line)
    emit(speed_table(res), {"command": invocation(ctx), **res}, json_out)
