"""The options of ``gnnca data dropped``; the work is in :mod:`gnn_chemalgebra.data.dropped`."""

from __future__ import annotations

from pathlib import Path

import typer

from .arguments import refuse_file_as_out, worker_count


def data_dropped(
    built: Path = typer.Argument(..., help="A folder written by 'gnnca data build --extra' (only read)."),
    out: Path = typer.Option(..., "--out", help="Folder for the closed reactions, their lines and the manifest."),
    workers: int = typer.Option(0, "--workers", min=0, help="Worker processes (0 = all cores)."),
    seed: int = typer.Option(0, "--seed", help="Seed for the lines' coefficient draws."),
    limit: int = typer.Option(0, "--limit", min=0, help="Only the first N rows the rule dropped (0 = all)."),
    max_added: int = typer.Option(2, "--max-added", min=0, max=2, help="By-products one closure may add."),
    roles_only: bool = typer.Option(
        False, "--roles-only", help="Mark the lines roles-only: their by-products are not training labels."
    ),
) -> None:
    """Training lines from the extra reactions the benchmark's leftover rule drops, closed with real by-products.

    The rows are screened again (product overlap with every USPTO-MIT valid/test reaction, duplicates: counted),
    closed with water, alcohols, CO2, salts... where the atoms allow (the rest counted by reason), and written as
    Type-1 and Type-2 SMILES and formula training lines in the chemist's convention, with meta (source row,
    whether atom maps exist) and a manifest. Add them to training with data.extra_dirs. BUILT is not changed."""
    from ..data.dropped import build_dropped
    from ..io import existing_folder

    folder = existing_folder(built, "built")
    refuse_file_as_out(out)
    n = worker_count(workers)
    build_dropped(
        folder, out, seed=seed, workers=n, limit=limit or None, max_added=max_added, roles_only=roles_only,
        log=typer.echo,
    )  # fmt: skip
