"""Presenting evaluator results: a fixed-width table for people, JSON for scripts.

Both read the dicts of :func:`.metrics.evaluate_lines` (optionally with a ``setting`` key), so every
consumer sees the same numbers; the table rounds to 2 decimals, JSON keeps 4.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from .metrics import RATES

MAIN_COLUMNS: tuple[str, ...] = ("EM", "JAC", "F1", "mol_JAC", "mol_F1", "VAL")


def _rounded(value: object, digits: int) -> object:
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, Mapping):
        return {k: _rounded(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v, digits) for v in value]
    return value


def to_json(result: Mapping[str, object] | Sequence[Mapping[str, object]], digits: int = 4) -> str:
    """One JSON document (an object, or a list of records in folder mode) on one line."""
    data = [dict(r) for r in result] if isinstance(result, Sequence) else dict(result)
    return json.dumps(_rounded(data, digits))


def _columns(rows: Sequence[Mapping[str, object]]) -> list[str]:
    cols = ["setting"] if any("setting" in r for r in rows) else []
    cols += ["n", *MAIN_COLUMNS]
    cols += [r for r in RATES if any(r in row for row in rows)]
    ks: list[str] = []
    for row in rows:
        for k in row.get("topk", {}) or {}:  # type: ignore[union-attr]
            if k != "1" and f"top{k}" not in ks:
                ks.append(f"top{k}")
    return cols + sorted(ks, key=lambda s: int(s[3:]))


def _cell(row: Mapping[str, object], col: str) -> str:
    if col.startswith("top") and col != "topk":
        value = (row.get("topk") or {}).get(col[3:])  # type: ignore[union-attr]
    else:
        value = row.get(col)
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def format_table(result: Mapping[str, object] | Sequence[Mapping[str, object]]) -> str:
    """Aligned text table, one row per result, with a header naming mode and representation."""
    rows = list(result) if isinstance(result, Sequence) else [result]
    if not rows:
        return "(no results)"
    cols = _columns(rows)
    cells = [[_cell(r, c) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]

    def fmt(values: Sequence[str]) -> str:
        parts = [
            v.ljust(w) if i == 0 and cols[0] == "setting" else v.rjust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    first = rows[0]
    title = f"ChemAlgebra evaluation: mode={first.get('mode')} repr={first.get('repr')}"
    if first.get("beam", 1) != 1:
        title += f" beam={first.get('beam')}"
    lines = [title, fmt(cols), fmt(["-" * w for w in widths])]
    lines += [fmt(row) for row in cells]
    lines.append("metrics in % of examples; top-1 prediction (mol_* ignore coefficients)")
    return "\n".join(lines)
