"""The options of ``gnnca bench decode-ablation``; the work is in :mod:`.ablation`."""

from __future__ import annotations

from pathlib import Path

import typer

from .command_io import emit, split_list


def decode_ablation_cmd(
    checkpoint: Path = typer.Option(
        ..., "--checkpoint", help="A trained GNN, e.g. runs/bench/F_T2_x1/gnn_std/best.pt."
    ),
    built: Path = typer.Option(Path("built/full"), "--built", help="Built data folder."),
    variant: str = typer.Option(..., "--variant", help="e.g. ChemAlgebra_F_T2_x1."),
    settings: str = typer.Option("valid,test_in,test_out", "--settings", help="Comma-separated splits."),
    limit: int = typer.Option(2000, "--limit", help="First N lines of each split (0 = all)."),
    json_out: Path = typer.Option(None, "--json", help="Also write the rows here."),
) -> None:
    """The decoder's options (coefficient evidence, closed-shell check) off and on, EM side by side."""
    from .ablation import ablation_table, decode_ablation

    rows = decode_ablation(checkpoint, built, variant, split_list(settings), limit)
    emit(ablation_table(rows), {"checkpoint": str(checkpoint), "variant": variant, "rows": rows}, json_out)
