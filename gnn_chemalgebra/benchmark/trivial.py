"""Baselines without a model, scored by the same evaluator: what a table row means at its floor.

``copy_source`` writes the input line as the prediction. ``type1_shortcut`` is "a perfect chemist who assumes
Type 1": the gold target molecules, each with the input's most common coefficient; exact on Type 1, it shows
what copying coefficients costs on Type 2.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from ..chem.bag import Term, format_bag, parse_bag
from ..data.layout import TEST_SETTINGS, split_files, variant_props, variant_short
from ..evaluation.metrics import evaluate_lines
from ..io import read_lines
from .records import METRICS, Record

MODELS: tuple[str, ...] = ("copy_source", "type1_shortcut")


def type1_shortcut(src: str, tgt: str) -> str:
    """Gold target molecules, each with the input's most common coefficient."""
    k = Counter(t.coef for t in parse_bag(src)).most_common(1)[0][0]
    return format_bag(Term(k, t.mol) for t in parse_bag(tgt))


def trivial_records(
    built: Path, variants: Sequence[str], command: str, log: Callable[[str], None] = lambda _: None
) -> list[Record]:
    """Both baselines on every test setting of every variant present in ``built``."""
    records = []
    for variant in variants:
        repr_ = str(variant_props(variant)["repr"])
        for setting in TEST_SETTINGS:
            src_p, tgt_p, _ = split_files(built, variant, setting)
            if not src_p.exists():
                continue
            src, tgt = read_lines(src_p), read_lines(tgt_p)
            preds = {
                "copy_source": src,
                "type1_shortcut": [type1_shortcut(s, t) for s, t in zip(src, tgt, strict=True)],
            }
            for model, pred in preds.items():
                s = evaluate_lines(pred, tgt, repr_, "paper")  # type: ignore[arg-type]
                rec: Record = {"model": model, "variant": variant_short(variant), "setting": setting}
                rec.update({k: s[k] for k in (*METRICS, "n")})
                rec["command"] = command
                records.append(rec)
                log(f"{model} {variant_short(variant)} {setting}: EM {float(s['EM']):.2f}")  # type: ignore[arg-type]
    return records
