"""The options of ``gnnca bench curves``; the work is in :mod:`.curves`."""

from __future__ import annotations

from pathlib import Path

import typer


def curves(
    run: list[str] = typer.Option(
        ...,
        "--run",
        help="Run folder (its metrics.jsonl) or a saved rows .jsonl: DIR, LABEL=DIR, or PANEL|LABEL=DIR for a "
        "grid with one panel per cell; repeat.",
    ),
    out: Path = typer.Option(Path("results/transformer_curves.png"), "--out", help="PNG to write."),
    title: str = typer.Option("", "--title", help="Figure title."),
    save_rows_to: Path = typer.Option(
        None, "--save-rows", help="Also keep each run's validation rows here (small .jsonl files to redraw from)."
    ),
) -> None:
    """Validation EM and token accuracy against optimiser steps of Transformer and GNN runs (one PNG).

    Without panels: EM of every run beside the Transformer runs' token accuracy. With PANEL|LABEL=DIR specs:
    one panel per cell, EM and token accuracy of its runs together.
    """
    import json

    from .curves import curves_summary, parse_panel_spec, plot_curve_grid, plot_curves, read_curve, save_rows

    curves = [read_curve(path, label, panel) for panel, label, path in map(parse_panel_spec, run)]
    if any(c.panel for c in curves):
        plot_curve_grid(curves, out, title)
    else:
        plot_curves(curves, out, title)
    for c, row in zip(curves, curves_summary(curves), strict=True):
        if save_rows_to is not None:
            row["rows_file"] = str(save_rows(c, save_rows_to))
        typer.echo(json.dumps({"panel": c.panel, **row} if c.panel else row))
    typer.echo(f"wrote {out}", err=True)
