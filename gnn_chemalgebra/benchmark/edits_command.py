"""The options of ``gnnca bench edits``; the work is in :mod:`.edits`."""

from __future__ import annotations

from pathlib import Path

import typer


def edits(
    config: Path = typer.Option(Path("configs/edits_cpu.yaml"), "--config", help="Edit-model preset."),
    set_: list[str] = typer.Option([], "--set", help="Config override key=value (repeatable)."),
    checkpoint: Path = typer.Option(None, "--checkpoint", help="Default: <run_dir>/best.pt (trained if missing)."),
    train_first: bool = typer.Option(False, "--train", help="Train even if the checkpoint exists."),
    split: str = typer.Option("test", "--split", help="USPTO-BAL split."),
    limit: int = typer.Option(2000, "--limit", help="First N reactions (0 = all)."),
    beam: int = typer.Option(5, "--beam", help="Edit-model beam: candidates per reaction (top-5 needs 5)."),
    out: Path = typer.Option(Path("results/edits.json"), "--out", help="Report (JSON)."),
) -> None:
    """The bond-edit model on USPTO-BAL reactions: main products top-1/top-5, validity, balance, speed."""
    import json

    from ..config import load_config
    from ..io import atomic_write_json
    from .edits import edit_benchmark

    report = edit_benchmark(load_config(config, set_), checkpoint, split, limit, beam, train_first=train_first)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out, report)
    keys = ("n", "top1", "top5", "valid_top1", "balanced_top1", "reactions_per_s")
    typer.echo(json.dumps({k: report["metrics"][k] for k in keys}))
