"""Why the GNN misses a line: the first wrong part (roles, leftover, main product, extent) of each EM failure.

Counted from the predictor's per-line report beside the gold decomposition of the example, written per run as
``errors-<setting>.json`` and tabulated for every variant in ``results/gnn_errors.md``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..data.layout import TEST_SETTINGS, VARIANTS, variant_short
from ..evaluation.metrics import evaluate_lines
from .records import LOCAL, index

CAUSES: tuple[str, ...] = ("roles", "leftover", "main", "extent")


def report_errors(examples: Sequence[Any], reports: Sequence[dict[str, Any]], repr_: str) -> dict[str, Any]:
    """:func:`error_counts` of the predictor's ``reports`` on labelled ``examples``, each line scored alone."""
    tgts = [ex.tgt or "" for ex in examples]
    flags = [evaluate_lines([r["prediction"]], [t], repr_)["EM"] == 100.0 for r, t in zip(reports, tgts, strict=True)]
    return error_counts(examples, reports, flags)


def error_counts(
    examples: Sequence[Any], reports: Sequence[dict[str, Any]], em_flags: Sequence[bool]
) -> dict[str, Any]:
    """First cause of each exact-match failure (checked in the order of ``CAUSES``, else ``other``), each part's
    independent wrong count over all lines, and how often the gold main product is in the top-1 / top-5."""
    first: Counter = Counter()
    wrong: Counter = Counter()
    for ex, r, ok in zip(examples, reports, em_flags, strict=True):
        gold = dict(zip(ex.mols, ex.nu_in or [], strict=True))
        pred = {m: int(r.get("nu", {}).get(m, 0)) for m in ex.mols}
        ranked = list(dict.fromkeys(b.get("main_product") for b in r.get("beam", [])))
        for k in (1, 5):
            wrong[f"main_top{k}_missed"] += ex.main is not None and ex.main not in ranked[:k]
        wrong["has_new_main"] += ex.main is not None
        right = {
            "roles": pred == gold,
            "leftover": sorted(set(r["new_products"]) - {r["main_product"]}) == sorted(ex.extras),
            "main": r["main_product"] == ex.main,
            "extent": r["extent"] == ex.xi,
        }
        for k in CAUSES:
            wrong[k] += not right[k]
        if not ok:
            first[next((k for k in CAUSES if not right[k]), "other")] += 1
    return {
        "n": len(examples),
        "n_fail": sum(not f for f in em_flags),
        "first_cause": dict(first),
        "wrong": dict(wrong),
    }


def _run_folders(variant_dir: Path, run: str) -> list[Path]:
    """``run`` itself first, then the same run on other training data (``<run>_<label>``)."""
    return [variant_dir / run, *sorted(variant_dir.glob(f"{run}_*"))] if variant_dir.is_dir() else []


def main_topk(wrong: dict[str, int], beam5: bool) -> str:
    """Main-product accuracy over the lines that have a new main product (top-5 only where the beam was 5)."""
    n = wrong.get("has_new_main", 0)
    if not n or "main_top1_missed" not in wrong:
        return "-"
    ks = (1, 5) if beam5 and "main_top5_missed" in wrong else (1,)  # no top-5 from a beam-1 breakdown
    return " / ".join(f"{100.0 * (1 - wrong[f'main_top{k}_missed'] / n):.1f}%" for k in ks)


def main_accuracy(wrong: dict[str, int], repr_: str) -> dict[str, float]:
    """``main_top1`` (and ``main_top5`` for SMILES, decoded with beam 5) in %, for the record."""
    n = wrong.get("has_new_main", 0)
    if not n:
        return {}
    return {
        f"main_top{k}": round(100.0 * (1 - wrong[f"main_top{k}_missed"] / n), 2)
        for k in ((1, 5) if repr_ == "smiles" else (1,))
        if f"main_top{k}_missed" in wrong
    }


ERROR_COLUMNS = (
    "| n | EM fails | roles | leftover | main | extent | other | roles wrong | leftover wrong | main wrong | "
    "extent wrong | main top-1 / top-5 |"
)
ERROR_RULE = "|---" * (ERROR_COLUMNS.count("|") + 1) + "|"  # variant, setting and the columns above
SMILES_NOTE = (
    "SMILES rows: the new main product comes from the bond-edit decoder over the reactants the role head picked "
    "(beam 5); 'main top-1 / top-5' = share of lines with a new main product whose gold main product is the "
    "best / among the five best hypotheses' main products (formula rows: the exact remainder, top-1 only)."
)


def record_errors(counts: dict[str, Any]) -> dict[str, Any]:
    """The part of :func:`error_counts` a benchmark record keeps (``errors``), so tables need no run folder."""
    return {k: counts[k] for k in ("n", "n_fail", "first_cause", "wrong")}


def error_row(label: str, setting: str, e: dict[str, Any], smiles: bool) -> str:
    """One table row of :func:`error_counts` output: first causes, then each part's wrong share, in %."""
    fc, w = e["first_cause"], e["wrong"]
    n_all = max(e["n"], 1)

    def pct(k: str, d: dict[str, int]) -> str:
        return f"{100.0 * d.get(k, 0) / n_all:.1f}%"

    return (
        f"| {label} | {setting} | {e['n']} | {pct('x', {'x': e['n_fail']})} | {pct('roles', fc)} | "
        f"{pct('leftover', fc)} | {pct('main', fc)} | {pct('extent', fc)} | {pct('other', fc)} | "
        f"{pct('roles', w)} | {pct('leftover', w)} | {pct('main', w)} | {pct('extent', w)} | {main_topk(w, smiles)} |"
    )


def records_error_table(records: Sequence[dict[str, Any]]) -> str:
    """Markdown table of every GNN record that carries ``errors`` (the records of ``results/benchmark.json``, so
    it is rebuilt from a fresh clone), grouped by training data; empty when none does."""
    rows = [r for r in records if r.get("model") == "gnn" and r.get("errors")]
    if not rows:
        return ""
    order = {variant_short(v): i for i, v in enumerate(VARIANTS)}
    rows.sort(
        key=lambda r: (
            str(r.get("training_data") or ""),
            order.get(r["variant"], 99),
            TEST_SETTINGS.index(r["setting"]),
        )
    )
    lines = [
        "# Why the GNN misses, from the records (`errors` of each GNN record in `results/benchmark.json`)",
        "",
        "Same columns as `gnn_errors.md`: the first cause of each exact-match failure (roles, leftover/by-product, "
        "main product, extent, other), then each part's wrong share over all lines; n = the lines scored.",
        "",
        "| variant | setting " + ERROR_COLUMNS + " training data |",
        ERROR_RULE + "---|",
    ]
    for r in rows:
        row = error_row(r["variant"], r["setting"], r["errors"], r["variant"].startswith("S_"))
        lines.append(f"{row} {r.get('training_data') or 'local'} |")
    return "\n".join([*lines, "", SMILES_NOTE, ""])


def _row_key(line: str) -> tuple[str, str]:
    """(variant label, setting) of an error-table row."""
    cells = [c.strip() for c in line.strip("|").split("|")]
    return cells[0], cells[1]


def _is_row(line: str) -> bool:
    return line.startswith("| ") and not line.startswith("| variant |")


def _table_rows(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if _is_row(ln)]


def _append_rows(table: str, rows: Sequence[str]) -> str:
    """``rows`` inserted after the last row of ``table`` (before its closing note)."""
    if not rows:
        return table
    lines = table.splitlines()
    last = max(i for i, ln in enumerate(lines) if ln.startswith("|"))
    return "\n".join([*lines[: last + 1], *rows, *lines[last + 1 :]]) + ("\n" if table.endswith("\n") else "")


def keep_missing_rows(old: str, new: str) -> str:
    """``new`` (an :func:`error_table`) plus the rows of ``old`` whose (variant label, setting) it lacks, so a merge
    over the run folders of some variants does not drop the committed rows of the others."""
    have = {_row_key(ln) for ln in _table_rows(new)}
    return _append_rows(new, [ln for ln in _table_rows(old) if _row_key(ln) not in have])


def replace_rows_from_records(table: str, records: Sequence[dict[str, Any]]) -> str:
    """``table`` (a ``gnn_errors.md``) with the row of each local-protocol GNN record that carries ``errors``
    rebuilt from that record, in place (appended when new): a rerun whose run folder lives elsewhere, or no
    longer exists, still updates its rows. Records of other training data are left to their labelled rows."""
    fresh = {
        (v, s): error_row(v, s, r["errors"], v.startswith("S_"))
        for (model, v, s), r in index(records, LOCAL).items()
        if model == "gnn" and r.get("errors")
    }
    lines = [fresh.pop(_row_key(ln), ln) if _is_row(ln) else ln for ln in table.splitlines()]
    text = "\n".join(lines) + ("\n" if table.endswith("\n") else "")
    return _append_rows(text, list(fresh.values()))


def error_table(runs: Path, run_names: Sequence[tuple[str, Sequence[str]]]) -> str:
    """Markdown table of every ``errors-<setting>.json`` under ``runs/<variant>/<run>*/``; a run folder with a
    training-data suffix (``gnn_std_local_extra``) gets its own rows, labelled with it."""
    lines = [
        "# Why the GNN misses (every variant; `errors-<setting>.json` in each run folder)",
        "",
        "First cause of each exact-match failure, checked in this order: roles (nu of an input molecule), "
        "leftover/by-product (the non-main new products), main product (the exact remainder), extent. "
        "`other` = every part right but the line still differs (paper-mode pairing of duplicate terms, or a "
        "Type-2 reagent/product term layout). 'wrong' columns count each part independently, over all lines.",
        "",
        "The role part in detail (scikit-learn per-role precision/recall/F1, confusion matrices, calibration of the "
        "role confidences with its plot `role_calibration.png`): `role_metrics.md`, written by `gnnca bench roles`.",
        "",
        "| variant | setting " + ERROR_COLUMNS,
        ERROR_RULE,
    ]
    for v in VARIANTS:
        short = variant_short(v)
        for run, settings in run_names:
            for folder in _run_folders(runs / short, run):
                label = short + (f" ({folder.name.removeprefix(run + '_')})" if folder.name != run else "")
                for s in settings:
                    f = folder / f"errors-{s}.json"
                    if not f.exists():
                        continue
                    lines.append(error_row(label, s, json.loads(f.read_text()), short.startswith("S_")))
    lines += ["", SMILES_NOTE, ""]
    return "\n".join(lines)
