"""The options of ``gnnca bench roles``; the work is in :mod:`.roles`."""

from __future__ import annotations

from pathlib import Path

import typer

from .command_io import invocation, log_line, split_list


def roles_cmd(
    ctx: typer.Context,
    checkpoint: Path = typer.Option(
        Path("gnn_chemalgebra/checkpoints/gnn_default.pt"), "--checkpoint", help="A trained GNN checkpoint."
    ),
    built: Path = typer.Option(Path("built/full"), "--built", help="Built data folder."),
    variants: str = typer.Option("F_T1_x5,F_T2_x1", "--variants", help="Comma-separated variants."),
    split: str = typer.Option("test_in", "--split", help="Split of each variant."),
    limit: int = typer.Option(2000, "--limit", help="First N lines of each split (0 = all)."),
    out: Path = typer.Option(Path("results"), "--out", help="Writes role_metrics.json/.md, role_calibration.png."),
) -> None:
    """The role head per role (precision / recall / F1, confusion matrix) and its calibration (PNG)."""
    from .roles import role_report, write_role_report

    res = role_report(checkpoint, built, split_list(variants), split, limit or None, log=log_line)
    res["command"] = invocation(ctx)
    for path in write_role_report(res, out):
        typer.echo(path)
