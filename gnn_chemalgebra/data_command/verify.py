"""The options of ``gnnca data verify``; the work is in :mod:`gnn_chemalgebra.data.build`."""

from __future__ import annotations

from pathlib import Path

import typer


def data_verify(folder: Path = typer.Argument(..., help="A folder written by 'gnnca data build'.")) -> None:
    """Re-check every built file's line count and sha256 against the folder's manifest."""
    from ..data.build import verify

    problems = verify(folder)
    for p in problems:
        typer.echo(p)
    if problems:
        typer.echo(f"{len(problems)} mismatch(es) in {folder}", err=True)
        raise typer.Exit(1)
    typer.echo(f"{folder}: every file matches manifest.json")
