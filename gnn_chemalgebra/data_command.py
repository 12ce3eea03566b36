"""``gnnca data``: build, extend and verify the ChemAlgebra datasets. Options only; the work is in
:mod:`gnn_chemalgebra.data`."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer


def build_data_app(
    wrap: Callable[[Callable[..., Any]], Callable[..., Any]], folder_of: Callable[[Path, str], Path]
) -> typer.Typer:
    """The ``gnnca data`` sub-commands; ``wrap`` turns the project's errors into one line, ``folder_of`` checks a
    folder that a command reads."""
    data_app = typer.Typer(help="Build and verify the ChemAlgebra datasets.", no_args_is_help=True)

    @data_app.command("build")
    @wrap
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
        from .data.build import build_all

        if chemist is not None:
            _chemist_out(chemist, out)
        build_all(out, source=source, seed=seed, workers=workers, limit=limit or None, strict=strict, extra=extra)
        if chemist is not None:
            from .data.chemist import build_chemist

            n = workers or os.cpu_count() or 1
            build_chemist(out, chemist, source=source, seed=seed, workers=n, log=typer.echo)

    def _chemist_out(chemist: Path, built: Path) -> None:
        """The chemist's-convention folder: a folder (or none yet) outside the benchmark build, else refused."""
        from .errors import InputError

        if chemist.exists() and not chemist.is_dir():
            raise InputError("is a file, not a folder", path=str(chemist))
        c, b = chemist.resolve(), built.resolve()
        if c == b or b in c.parents:
            raise InputError("the chemist's-convention folder must be outside the benchmark folder", path=str(chemist))

    @data_app.command("formula-extra")
    @wrap
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
        from .data.formula_extra import build_formula_extra
        from .errors import InputError

        n = workers or os.cpu_count() or 1
        folder = folder_of(built, "built")
        if out.exists() and not out.is_dir():
            raise InputError("--out is a file, not a folder", path=str(out))
        if out.resolve() == folder.resolve():
            raise InputError(
                "--out must be another folder than the one read (its files are copied from there)", path=str(out)
            )
        build_formula_extra(folder, out, workers=n, seed=seed, leftover_labels=leftover_labels, log=typer.echo)

    @data_app.command("chemist")
    @wrap
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
        from .data.chemist import build_chemist

        folder = folder_of(built, "built")
        _chemist_out(out, folder)
        n = workers or os.cpu_count() or 1
        build_chemist(folder, out, source=source, seed=seed, workers=n, max_added=max_added, log=typer.echo)

    @data_app.command("verify")
    @wrap
    def data_verify(folder: Path = typer.Argument(..., help="A folder written by 'gnnca data build'.")) -> None:
        """Re-check every built file's line count and sha256 against the folder's manifest."""
        from .data.build import verify

        problems = verify(folder)
        for p in problems:
            typer.echo(p)
        if problems:
            typer.echo(f"{len(problems)} mismatch(es) in {folder}", err=True)
            raise typer.Exit(1)
        typer.echo(f"{folder}: every file matches manifest.json")

    @data_app.command("dropped")
    @wrap
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
        from .data.dropped import build_dropped
        from .errors import InputError

        folder = folder_of(built, "built")
        if out.exists() and not out.is_dir():
            raise InputError("--out is a file, not a folder", path=str(out))
        n = workers or os.cpu_count() or 1
        build_dropped(
            folder, out, seed=seed, workers=n, limit=limit or None, max_added=max_added, roles_only=roles_only,
            log=typer.echo,
        )  # fmt: skip

    return data_app
