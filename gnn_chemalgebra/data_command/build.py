"""The options of ``gnnca data build``; the work is in :mod:`gnn_chemalgebra.data.build`."""

from __future__ import annotations

from pathlib import Path

import typer

from .arguments import check_chemist_folder, worker_count


def data_build(
    out: Path = typer.Option(..., "--out", help="Folder to write USPTO-BAL and the eight variants into."),
    source: Path = typer.Option(
        None, "--source", help="Folder with USPTO-MIT files (default: the bundled data/ folder)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed for splits and coefficient draws."),
    workers: int = typer.Option(0, "--workers", min=0, help="Worker processes (0 = all cores)."),
    limit: int = typer.Option(
        0, "--limit", min=0, help="Use only the first N reactions of each split (for tests; 0 = all)."
    ),
    strict: bool = typer.Option(False, "--strict", help="Fail on the first unreadable source reaction."),
    extra: bool = typer.Option(
        False,
        "--extra",
        help="Add training reactions from USPTO-500-MT and USPTO-full (data/), after removing every one whose "
        "product is a USPTO-MIT valid/test product and duplicates; valid and test files stay unchanged.",
    ),
    chemist: Path = typer.Option(
        None,
        "--chemist",
        help="Also write the chemist's-convention sets to this folder (outside --out; as 'gnnca data chemist "
        "OUT --out CHEMIST' does). The benchmark's files are the same with and without it.",
    ),
) -> None:
    """Build USPTO-MIT separated, USPTO-BAL and all ChemAlgebra variants, deterministically."""
    from ..data.build import build_all

    if chemist is not None:
        check_chemist_folder(chemist, out)
    build_all(out, source=source, seed=seed, workers=workers, limit=limit or None, strict=strict, extra=extra)
    if chemist is not None:
        from ..data.chemist import build_chemist

        n = worker_count(workers)
        build_chemist(out, chemist, source=source, seed=seed, workers=n, log=typer.echo)
