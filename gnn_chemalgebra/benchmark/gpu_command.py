"""The options of ``gnnca bench gpu``; the work is in :mod:`.gpu`."""

from __future__ import annotations

from pathlib import Path

import typer

from .command_io import VARIANT_HELP, emit


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
    emit(gpu_table(res), res, json_out)
    if not res["mixed_precision_ok"]:
        raise typer.Exit(1)
