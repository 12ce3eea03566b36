"""``gnnca bench roles``: the role head of a trained GNN scored per role, with a calibration plot.

Runs the network on the first ``limit`` lines of each variant's split, reads the head's probabilities and the
roles of the hypotheses the predictor wrote, and hands them to :mod:`gnn_chemalgebra.evaluation.roles`
(scikit-learn metrics). Writes ``role_metrics.json``, ``role_metrics.md`` and ``role_calibration.png``.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..checkpoint import load_checkpoint
from ..data.dataset import load_examples, to_data
from ..data.layout import variant_short
from ..evaluation.roles import plot_role_calibration, role_metrics, role_metrics_markdown, role_samples
from ..io import atomic_write_json, atomic_write_text


def head_probabilities(predictor: Any, examples: Sequence[Any], batch_size: int = 64) -> list[Any]:
    """The role head's ``[n_mols, classes]`` probabilities of each example (no decoding)."""
    out: list[Any] = []
    for s in range(0, len(examples), batch_size):
        chunk = examples[s : s + batch_size]
        data = [to_data(ex, predictor.feat, predictor.vocab, i, labels=False) for i, ex in enumerate(chunk)]
        out += [r["role_p"] for r in predictor.forward(data)]
    return out


def role_report(
    checkpoint: str | Path,
    built: str | Path,
    variants: Sequence[str],
    split: str = "test_in",
    limit: int | None = 2000,
    batch_size: int = 64,
    log: Any = print,
) -> dict[str, Any]:
    """Role metrics of one checkpoint on each ``variant``'s ``split`` (first ``limit`` lines; ``None``: all)."""
    from ..inference.predictor import Predictor

    predictor = Predictor.from_checkpoint(str(checkpoint))
    trained_on = (load_checkpoint(str(checkpoint), map_location="cpu").get("meta") or {}).get("variant")
    reports: dict[str, Any] = {}
    for variant in variants:
        long_name = variant if variant.startswith("ChemAlgebra_") else f"ChemAlgebra_{variant}"
        t0 = time.perf_counter()
        examples = load_examples(built, long_name, split, limit=limit)
        probs = head_probabilities(predictor, examples, batch_size)
        records = predictor.predict(examples, batch_size=batch_size)
        samples = role_samples(examples, probs, [r["nu"] for r in records])
        m = role_metrics(samples["gold"], samples["prob"], samples["decoded"])
        m.update(
            variant=long_name,
            split=split,
            lines=len(examples),
            fallback_lines=sum(bool(r.get("fallback")) for r in records),
        )
        reports[f"{variant_short(long_name)} {split}"] = m
        log(
            f"{variant_short(long_name)} {split}: {len(examples)} lines, {m['n_molecules']} molecules, "
            f"{time.perf_counter() - t0:.0f} s"
        )
    return {
        "checkpoint": str(checkpoint),
        "trained_on": trained_on,
        "built": str(built),
        "split": split,
        "limit": limit,
        "reports": reports,
    }


def write_role_report(result: dict[str, Any], out: str | Path) -> list[Path]:
    """``role_metrics.json`` / ``.md`` and ``role_calibration.png`` under ``out``; the command goes in all three."""
    out = Path(out)
    result = {**result, "command": result.get("command") or shlex.join(["gnnca", *sys.argv[1:]])}
    limit = result["limit"]
    note = (
        f"Checkpoint `{result['checkpoint']}` (trained on {result.get('trained_on') or 'an unrecorded variant'}), "
        f"data `{result['built']}`, "
        f"{'first ' + format(limit, ',') + ' lines' if limit else 'all lines'} of each split. "
        "Unit: a distinct input molecule. *head*: the role head's most likely class; *decoded*: the class of the "
        "hypothesis the predictor wrote (balance and Type-2 evidence may overrule the head). Roles: reactant "
        "(nu < 0), reagent (nu = 0), product already present (nu > 0). Metrics by scikit-learn "
        "(precision_recall_fscore_support, confusion_matrix, calibration_curve). Plot: `role_calibration.png`.\n\n"
        f"Command: `{result['command']}`"
    )
    paths = [out / "role_metrics.json", out / "role_metrics.md", out / "role_calibration.png"]
    atomic_write_json(paths[0], result)
    atomic_write_text(
        paths[1], role_metrics_markdown(result["reports"], "Role head: per-role metrics and calibration", note)
    )
    plot_role_calibration(result["reports"], paths[2])
    return paths
