"""The ``gnnca`` command line. It only wires options to library functions and turns
the project's errors into one clear line on stderr with exit code 2."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from .errors import ChemAlgebraError

app = typer.Typer(
    help="gnn-chemalgebra: the ChemAlgebra benchmark, a GNN with exact stoichiometric algebra, and its evaluator.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
data_app = typer.Typer(help="Build and verify the ChemAlgebra datasets.", no_args_is_help=True)
app.add_typer(data_app, name="data")


def friendly_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Report project errors as ``gnnca: error: file:line: reason`` and exit 2 (no traceback)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ChemAlgebraError as err:
            typer.echo(f"gnnca: error: {err}", err=True)
            raise typer.Exit(2) from None
        except (FileNotFoundError, IsADirectoryError, PermissionError) as err:
            typer.echo(f"gnnca: error: {err.filename}: {err.strerror}", err=True)
            raise typer.Exit(2) from None

    return wrapper


# --------------------------------------------------------------------------- data
@data_app.command("build")
@friendly_errors
def data_build(
    out: Path = typer.Option(..., "--out", help="Folder to write USPTO-BAL and the eight variants into."),
    source: Path = typer.Option(
        None, "--source", help="Folder with USPTO-MIT files (default: the bundled data/ folder)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed for splits and coefficient draws."),
    workers: int = typer.Option(0, "--workers", help="Worker processes (0 = all cores)."),
    limit: int = typer.Option(0, "--limit", help="Use only the first N reactions of each split (for tests)."),
    strict: bool = typer.Option(False, "--strict", help="Fail on the first unreadable source reaction."),
) -> None:
    """Build USPTO-MIT separated, USPTO-BAL and all ChemAlgebra variants, deterministically."""
    from .data.build import build_all

    build_all(out, source=source, seed=seed, workers=workers, limit=limit or None, strict=strict)


def main() -> None:  # pragma: no cover - console entry
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
