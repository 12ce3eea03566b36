"""The ``gnnca bench conformal`` command: its options, handed to :func:`~.conformal.run_conformal`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer


def add_conformal_command(bench: typer.Typer, wrap: Callable[..., Any], command_of: Callable[..., str]) -> None:
    """Register ``gnnca bench conformal`` on ``bench`` (``command_of(ctx)``: the invocation, for the record)."""

    @bench.command("conformal")
    @wrap
    def conformal_cmd(
        ctx: typer.Context,
        checkpoint: list[Path] = typer.Option(
            [], "--checkpoint", help="GNN checkpoint(s) (repeatable; default: both bundled models)."
        ),
        built: Path = typer.Option(Path("built/full"), "--built", help="Built data: its validation files."),
        valid: str = typer.Option(
            "T1_x1,T2_x1",
            "--valid",
            help="Variants whose src-valid.txt lines fit the sets (F_/S_ added by the model; a variant named with "
            "F_ or S_ fits only the model of that representation); T1_x1:1000 keeps the first 1,000 lines.",
        ),
        top_k: int = typer.Option(5, "--top-k", help="Most alternatives in a set (quantiles for every k up to it)."),
        coverages: str = typer.Option(
            "", "--coverages", help="Coverages fitted, comma separated (default 0.5 ... 0.99, 0.9 among them)."
        ),
        score: str = typer.Option("lac", "--score", help="Nonconformity score: lac (1 - p) or aps (cumulative)."),
        records: Path = typer.Option(None, "--records", help="Folder keeping prediction records for reuse."),
        out: Path = typer.Option(Path("results/conformal/conformal.json"), "--out", help="The sidecar written (JSON)."),
        shifted: Path = typer.Option(
            None,
            "--shifted",
            help="Shifted validation files (experiments/shift_split.py): valid_out fits the "
            "quantiles of Type-2 lines beyond the training coefficients.",
        ),
        chemist: str = typer.Option(
            "",
            "--chemist",
            help="A 'gnnca data chemist' folder whose validation lines (real by-products) join the fit; "
            "DIR:1000 keeps the first 1,000 lines.",
        ),
    ) -> None:
        """Conformal prediction sets: fit on validation lines the quantiles that gnnca predict --coverage reads
        (pass the file with --conformal, or name it <checkpoint>.conformal.json beside the checkpoint)."""
        from ..errors import InputError
        from ..inference.run import DEFAULT_CHECKPOINT, SMILES_CHECKPOINT
        from .conformal import run_conformal

        try:
            covs = [float(c) for c in coverages.split(",") if c.strip()]
        except ValueError:
            raise InputError(f"--coverages must be numbers separated by commas, got {coverages!r}") from None
        folder, _, n = chemist.partition(":")
        if n and not n.isdigit():
            raise InputError(f"--chemist: a line count after ':' must be a whole number, got {n!r}")
        res = run_conformal(
            checkpoint or [DEFAULT_CHECKPOINT, SMILES_CHECKPOINT],
            built,
            valid=valid,
            k=top_k,
            coverages=covs or None,
            score=score,
            records=records,
            out=out,
            shifted=shifted,
            chemist=(Path(folder), int(n) if n else None) if folder else None,
            command=command_of(ctx),
            log=lambda m: typer.echo(m, err=True),
        )
        typer.echo(res["path"])
