"""The options of ``gnnca bench memory``; the work is in :mod:`.memory`."""

from __future__ import annotations

from pathlib import Path

import typer

from .command_io import VARIANT_HELP, emit, log_line, split_list


def memory(
    built: Path = typer.Option(Path("built/full"), "--built", help="Built data folder (training points)."),
    variant: str = typer.Option("ChemAlgebra_F_T1_x5", "--variant", help=VARIANT_HELP),
    build_limits: str = typer.Option("1000,3000,6000", "--build-limits", help="Reactions per MIT split ('' = none)."),
    train_lines: str = typer.Option("2000,6000,12000", "--train-lines", help="Training lines per point."),
    lazy: bool = typer.Option(False, "--lazy", help="Train with data.lazy=true (bags featurised on access)."),
    config: str = typer.Option("configs/gnn_cpu.yaml", "--config", help="GNN preset."),
    json_out: Path = typer.Option(None, "--json", help="Also write the measurements here."),
) -> None:
    """Peak memory of the builder and of one training epoch at several sizes, extrapolated to the paper's."""
    from .memory import measure_memory, memory_table

    res = measure_memory(
        built, variant, [int(x) for x in split_list(build_limits)], [int(x) for x in split_list(train_lines)], lazy,
        config, log=log_line,
    )  # fmt: skip
    emit(memory_table(res), res, json_out)
