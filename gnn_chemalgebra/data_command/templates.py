"""The options of ``gnnca data templates``; the work is in :mod:`gnn_chemalgebra.data.templates`."""

from __future__ import annotations

from pathlib import Path

import typer

from .arguments import refuse_file_as_out, worker_count


def data_templates(
    built: Path = typer.Argument(..., help="A folder written by 'gnnca data build' (only read)."),
    out: Path = typer.Option(..., "--out", help="Folder for the generated reactions, their lines and the manifest."),
    per_class: int = typer.Option(1500, "--per-class", min=1, help="Reactions per class (shared by its templates)."),
    seed: int = typer.Option(0, "--seed", help="Seed for the substrate order, partners, conditions and lines."),
    workers: int = typer.Option(0, "--workers", min=0, help="Worker processes (0 = all cores)."),
    only: list[str] = typer.Option([], "--template", help="Only this template (repeatable; default: all)."),
    rounds: int = typer.Option(2, "--rounds", min=1, max=2, help="2: short templates also run on round-1 products."),
) -> None:
    """Training reactions for the textbook classes patents rarely write, from reaction templates.

    Each template (SN2, E2, additions to alkenes, oxidations, hydride reductions, Grignard, Wittig, condensations,
    acyl chemistry, aromatic substitution, couplings, protecting groups...) is applied to the molecules of BUILT's
    training reactions, one unambiguous site per molecule, with the reagents a chemist writes and real
    by-products; every reaction is balanced by the project's algebra and atom-mapped, every main product screened
    against the USPTO-MIT and benchmark valid/test products and the textbook reactions (counted). Written as
    Type-1 and Type-2 SMILES and formula training lines in the chemist's convention with a manifest; add them to
    training with data.extra_dirs. BUILT is not changed."""
    from ..data.templates import build_templates
    from ..io import existing_folder

    folder = existing_folder(built, "built")
    refuse_file_as_out(out)
    build_templates(
        folder, out, per_class=per_class, seed=seed, workers=worker_count(workers), names=list(only) or None,
        rounds=rounds, log=typer.echo,
    )  # fmt: skip
