"""The options of ``gnnca bench edit-labels``; the work is in :mod:`.edit_labels`."""

from __future__ import annotations

from pathlib import Path

import typer


def edit_labels(
    data: Path = typer.Option(..., "--data", help="A built dataset (gnnca data build --out)."),
    split: str = typer.Option("train", "--split", help="train | valid | test"),
    limit: int = typer.Option(0, "--limit", help="Only the first N reactions (0 = all)."),
    source: str = typer.Option("all", "--source", help="Records of one source: uspto_mit, uspto_full, all."),
    labels_only: bool = typer.Option(False, "--labels-only", help="Skip the (slow) leftover-chain rules."),
) -> None:
    """Gold bond-edit labels re-applied to the reactants, and three leftover-chain rules, on USPTO-BAL."""
    import json

    from ..errors import InputError
    from .edit_labels import label_markdown, label_report

    if split not in ("train", "valid", "test"):
        raise InputError(f"--split must be train, valid or test, got {split!r}")
    path = data / "uspto_bal" / f"reactions-{split}.jsonl"
    if not path.exists():
        raise InputError("no USPTO-BAL reactions file (gnnca data build --out ...)", path=str(path))
    report = label_report(path, limit or None, source, not labels_only)
    typer.echo(label_markdown(report, f"{split} ({source})"))
    typer.echo("JSON " + json.dumps({"split": split, "source": source, **report}, sort_keys=True))
