"""The options of ``gnnca data chemist``; the work is in :mod:`gnn_chemalgebra.data.chemist`."""

from __future__ import annotations

from pathlib import Path

import typer

from .arguments import check_chemist_folder, worker_count


def data_chemist(
    built: Path = typer.Argument(..., help="A folder written by 'gnnca data build' (only read)."),
    out: Path = typer.Option(..., "--out", help="Folder for the chemist's-convention sets (outside BUILT)."),
    source: Path = typer.Option(
        None, "--source", help="Folder with the USPTO-MIT files BUILT was built from (default: its manifest's)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed for the lines' extents and term order."),
    workers: int = typer.Option(0, "--workers", min=0, help="Worker processes (0 = all cores)."),
    max_added: int = typer.Option(2, "--max-added", min=1, help="Most by-products added to close one reaction."),
) -> None:
    """Validation and test sets in the chemist's convention: the USPTO-MIT valid and test reactions the benchmark's
    leftover rule drops, balanced with real by-products (water, HCl, CO2, alcohols, ...) where the atoms allow.

    Writes Type-1 lines in SMILES (OUT/smiles) and formulas (OUT/formula), the balanced reactions, the reactions not
    balanced with the reason, and a manifest with counts and sha256. BUILT is not changed."""
    from ..data.chemist import build_chemist
    from ..io import existing_folder

    folder = existing_folder(built, "built")
    check_chemist_folder(out, folder)
    n = worker_count(workers)
    build_chemist(folder, out, source=source, seed=seed, workers=n, max_added=max_added, log=typer.echo)
