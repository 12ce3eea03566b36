"""The options of ``gnnca bench textbook``; the work is in :mod:`.textbook`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

TEXTBOOK_HELP = """The textbook reactions (data/textbook) through the predictor, per part and style.

Every row is predicted three ways: as a SMILES bag (the reactants as a chemist
writes them, {k} only where written), as a formula bag (the same molecules as
formulas) and as a reaction SMILES naming the main products
(reactants>reagents>main: the tool completes the by-products). Lines are read
as gnnca predict reads a user's line (--extent limiting: coefficients are
amounts; --line-type 1: every product is new). The expected line is the
balanced outcome: products, real by-products (water, HCl, salts, CO2, N2,
alcohols ...) and every unconsumed reagent or catalyst written back. Right means
equal after canonicalisation (gnnca evaluate --mode strict).

\b
Columns, per part and style:
lines             lines predicted
right             top-1 line right
right in top 3    the right line among the --top-k best
wrong, confident  wrong, confidence >= --threshold and in domain
                  (the lines a user would trust and should not)
right but flagged right, but confidence < --threshold or out of
                  domain (right lines a careful user sets aside)
fallbacks         no balanced hypothesis: the source written back
refused           lines the predictor could not read

Report the held_out part; look at errors on dev (it is the part to tune on).

\b
Examples:
gnnca bench textbook --part held_out
gnnca bench textbook --json results/textbook/dev.json --records dev_lines.jsonl
gnnca bench textbook --checkpoint runs/x/best.pt --styles smiles,reaction
gnnca bench textbook --part dev --check
"""


def register_textbook(
    bench: typer.Typer, wrap: Callable[[Callable[..., Any]], Callable[..., Any]], command: Callable[..., str]
) -> None:
    """Add ``textbook`` to the ``gnnca bench`` sub-app."""

    @bench.command("textbook", help=TEXTBOOK_HELP)
    @wrap
    def textbook(
        ctx: typer.Context,
        part: str = typer.Option("all", "--part", help="dev, held_out or all (one table row per part)."),
        styles: str = typer.Option("smiles,formula,reaction", "--styles", help="Comma-separated input styles."),
        checkpoint: list[Path] = typer.Option(
            [], "--checkpoint", help="GNN checkpoint (repeatable, one per representation; default: the bundled)."
        ),
        edit_checkpoint: Path = typer.Option(
            None, "--edit-checkpoint", help="Bond-edit model for SMILES lines (as gnnca predict; default: the bundled)."
        ),
        data: Path = typer.Option(None, "--data", help="Folder of dev.tsv and held_out.tsv (default: data/textbook)."),
        extent: str = typer.Option("limiting", "--extent", help="Extent rule (as gnnca predict --extent)."),
        line_type: str = typer.Option("1", "--line-type", help="1, 2, auto or model (as gnnca predict)."),
        threshold: float = typer.Option(0.6, "--threshold", help="Confidence below which a line is flagged."),
        top_k: int = typer.Option(3, "--top-k", help="Best distinct lines kept for 'right in top k'."),
        limit: int = typer.Option(0, "--limit", help="First N rows of each part (0 = all)."),
        set_: list[str] = typer.Option([], "--set", help="Decode setting decode.key=value (repeatable)."),
        json_out: Path = typer.Option(None, "--json", help="Also write the counts (and per-class results) here."),
        records_out: Path = typer.Option(None, "--records", help="Also write one JSON record per line here."),
        check: bool = typer.Option(False, "--check", help="Only read and check the rows; run no model."),
    ) -> None:
        from ..data.textbook import DEFAULT_DIR
        from ..io import atomic_write_json, atomic_write_text
        from .textbook import TextbookOptions, run_textbook, textbook_predict, textbook_rows, textbook_table

        predict = textbook_predict(
            extent=extent, line_type=line_type, top_k=top_k, settings=list(set_), edit_checkpoint=edit_checkpoint
        )
        opts = TextbookOptions(
            part=part, styles=tuple(s for s in styles.split(",") if s), data=data or DEFAULT_DIR,
            checkpoints=tuple(checkpoint), threshold=threshold, limit=limit, predict=predict,
        )  # fmt: skip
        if check:
            rows = textbook_rows(opts)
            per = {p: sum(r.part == p for r in rows) for p in sorted({r.part for r in rows})}
            typer.echo(f"{len(rows)} reactions in {len({r.cls for r in rows})} classes, all balanced: {per}")
            return
        res = run_textbook(opts, log=lambda m: typer.echo(m, err=True))
        res["command"] = command(ctx)
        typer.echo(textbook_table(res))
        records = res.pop("records")
        if json_out is not None:
            atomic_write_json(json_out, res)
        if records_out is not None:
            import json

            atomic_write_text(records_out, "".join(json.dumps(r) + "\n" for r in records))
