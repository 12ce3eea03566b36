"""One trained GNN scored with the decoder's options switched off and on, side by side on the same lines.

Options: ``evidence`` (Type 2: weigh role hypotheses by the generator's exact likelihood of the written
coefficients) and ``valence`` (formula: a neutral main-product remainder must admit a closed-shell molecule).
Each row scores the same lines with both off, each one alone, and both on.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..data.dataset import load_examples
from ..data.layout import variant_props
from ..evaluation.metrics import evaluate_lines

COMBOS = {"off": (False, False), "+valence": (False, True), "+evidence": (True, False), "both": (True, True)}


def decode_ablation(
    checkpoint: Path, built: Path, variant: str, settings: Sequence[str], limit: int
) -> list[dict[str, Any]]:
    """Per setting: EM and decoding seconds of each option combination (``role_evidence``, ``valence_check``)."""
    from ..inference.predictor import Predictor

    routed = Predictor.from_checkpoint(str(checkpoint))
    pred = routed.reader(int(variant_props(variant)["type"]))  # the options must reach the model that decodes
    rows = []
    for setting in settings:
        exs = load_examples(built, variant, setting, limit or None)
        tgts = [ex.tgt or "" for ex in exs]
        row: dict[str, Any] = {"setting": setting, "n": len(exs)}
        for name, (evidence, valence) in COMBOS.items():
            pred.settings.role_evidence, pred.settings.valence_check = evidence, valence
            t0 = time.perf_counter()
            lines = [r.prediction for r in pred.predict(exs, batch_size=256)]
            row[f"EM {name}"] = round(float(evaluate_lines(lines, tgts, pred.repr)["EM"]), 2)  # type: ignore[arg-type]
            row[f"s {name}"] = round(time.perf_counter() - t0, 1)
        rows.append(row)
    return rows


def ablation_table(rows: Sequence[dict[str, Any]]) -> str:
    lines = ["| setting | n | " + " | ".join(f"EM {c}" for c in COMBOS) + " | both - off |"]
    lines.append("|---|---|" + "---|" * (len(COMBOS) + 1))
    for row in rows:
        ems = [float(row[f"EM {c}"]) for c in COMBOS]
        lines.append(
            f"| {row['setting']} | {row['n']} | "
            + " | ".join(f"{e:.2f}" for e in ems)
            + f" | {ems[-1] - ems[0]:+.2f} |"
        )
    return "\n".join(lines) + "\n"
