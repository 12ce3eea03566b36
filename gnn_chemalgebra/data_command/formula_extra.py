"""The options of ``gnnca data formula-extra``; the work is in :mod:`gnn_chemalgebra.data.formula_extra`."""

from __future__ import annotations

from pathlib import Path

import typer

from .arguments import refuse_file_as_out, worker_count


def data_formula_extra(
    built: Path = typer.Argument(..., help="A folder written by 'gnnca data build --extra'."),
    out: Path = typer.Option(..., "--out", help="Folder for the formula variants with the added training lines."),
    workers: int = typer.Option(0, "--workers", min=0, help="Worker processes (0 = all cores)."),
    seed: int = typer.Option(0, "--seed", help="Seed for the added lines' coefficient draws."),
    leftover_labels: bool = typer.Option(
        False,
        "--leftover-labels",
        help="Train on the added lines' leftovers too (default: their roles only; their leftovers, NH3, CH3OH, "
        "..., are ones the benchmark never writes, and learning them cost F_T1_x1 validation EM).",
    ),
) -> None:
    """Formula training lines from the extra reactions the benchmark's leftover rule drops (about half of them).

    Their leftover (NH3, CH3OH, ...) has no chain RDKit accepts, so they have no SMILES line, but a formula line
    needs none. The rows are screened again (product overlap with MIT valid/test, duplicates: counted), appended
    to train and train_cross of the x1 formula variants, marked roles-only; every other file is copied unchanged.
    Train on OUT like any built folder; the decoder keeps only leftovers the benchmark can write
    (decode.admissible_leftover)."""
    from ..data.formula_extra import build_formula_extra
    from ..errors import InputError
    from ..io import existing_folder

    n = worker_count(workers)
    folder = existing_folder(built, "built")
    refuse_file_as_out(out)
    if out.resolve() == folder.resolve():
        raise InputError(
            "--out must be another folder than the one read (its files are copied from there)", path=str(out)
        )
    build_formula_extra(folder, out, workers=n, seed=seed, leftover_labels=leftover_labels, log=typer.echo)
