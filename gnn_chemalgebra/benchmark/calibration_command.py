"""The options of ``gnnca bench calibration``; the work is in :mod:`.calibration`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer


def add_calibration_command(
    bench: typer.Typer,
    wrap: Callable[[Callable[..., Any]], Callable[..., Any]],
    command: Callable[[typer.Context], str],
    split_list: Callable[[str], tuple[str, ...]],
) -> None:
    """Register ``gnnca bench calibration`` on ``bench``."""

    @bench.command("calibration")
    @wrap
    def calibration_cmd(
        ctx: typer.Context,
        checkpoint: list[Path] = typer.Option(
            [], "--checkpoint", help="GNN checkpoint(s) (repeatable; default: both bundled models)."
        ),
        built: Path = typer.Option(Path("built/full"), "--built", help="Built data: validation and test files."),
        train: str = typer.Option(
            "",
            "--train",
            help="Built data whose meta-train.jsonl feeds the in-domain index (default: --built); several folders "
            "comma separated (a model trained on extra folders: data.extra_dirs).",
        ),
        valid: str = typer.Option("T1_x1,T2_x1", "--valid", help="Variants whose src-valid.txt fit the calibration."),
        test: str = typer.Option("T1_x1,T2_x1", "--test", help="Variants scored (F_/S_ added by the model)."),
        split: str = typer.Option("test_in", "--split", help="Test split."),
        limit: int = typer.Option(0, "--limit", help="First N lines of each test file (0 = all)."),
        fit: bool = typer.Option(True, "--fit/--no-fit", help="Fit on validation and write the sidecars first."),
        fit_limit: int = typer.Option(0, "--fit-limit", help="Fit on the first N lines of each file (0 = all)."),
        keep_index: bool = typer.Option(
            False, "--keep-index", help="Refit the calibration only; keep the in-domain index beside the checkpoint."
        ),
        fit_beam: int = typer.Option(5, "--fit-beam", help="Beam of the validation predictions (alternatives)."),
        beam: int = typer.Option(1, "--beam", help="Beam of the test predictions (1: as gnnca predict)."),
        quantile: float = typer.Option(
            0.02, "--domain-quantile", help="Similarity threshold: this quantile of the validation lines'."
        ),
        max_sets: int = typer.Option(32768, "--max-sets", help="Most training reactant sets kept in the index."),
        records: Path = typer.Option(None, "--records", help="Folder keeping prediction records for reuse."),
        out: Path = typer.Option(Path("results/calibration"), "--out", help="Writes calibration[_TAG].json, PNGs."),
        tag: str = typer.Option("", "--tag", help="Suffix of the output names."),
        shifted: Path = typer.Option(
            None, "--shifted", help="Shifted validation files (experiments/shift_split.py): fitted on too."
        ),
        shifted_splits: str = typer.Option(
            "valid_out,valid_scaffold", "--shifted-splits", help="Their splits (src-SPLIT.txt) fitted on."
        ),
        chemist: Path = typer.Option(
            None,
            "--chemist",
            help="A 'gnnca data chemist' folder: its validation lines (real by-products) are fitted on too and its "
            "test lines scored too.",
        ),
    ) -> None:
        """Calibrated confidence and in-domain index: fit on validation lines (written beside each checkpoint as
        <checkpoint>.trust.json/.npz), then ECE, AUROC and exact match at 50/80/100% coverage on test lines,
        with a reliability diagram and a coverage-accuracy curve per model (PNG) and a JSON record."""
        from ..inference.run import DEFAULT_CHECKPOINT, SMILES_CHECKPOINT
        from .calibration import run_calibration

        res = run_calibration(
            checkpoint or [DEFAULT_CHECKPOINT, SMILES_CHECKPOINT],
            built,
            train=[Path(t) for t in split_list(train)] or None,
            valid_variants=split_list(valid),
            test_variants=split_list(test),
            split=split,
            limit=limit or None,
            fit=fit,
            keep_index=keep_index,
            fit_beam=fit_beam,
            beam=beam,
            quantile=quantile,
            max_sets=max_sets,
            records=records,
            out=out,
            tag=tag,
            shifted=shifted,
            shifted_splits=split_list(shifted_splits),
            chemist=chemist,
            fit_limit=fit_limit or None,
            command=command(ctx),
            log=lambda m: typer.echo(m, err=True),
        )
        for m in res["models"]:
            typer.echo(f"{m['checkpoint']}\n{m['table']}\n")
        typer.echo(res["path"])
