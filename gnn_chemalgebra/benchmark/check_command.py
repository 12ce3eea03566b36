"""The options of ``gnnca bench check``; the work is in :mod:`.checks`."""

from __future__ import annotations

from pathlib import Path

import typer


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
