"""Readable tables from the records: the benchmark table (experiments/comparison.md), the GNN's own table with its
verdicts, and the results blocks of a Markdown page regenerated between its markers."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..data.layout import TEST_SETTINGS, VARIANTS, variant_short
from ..io import atomic_write_text
from .ceilings import ceiling_for, ceiling_record
from .records import LOCAL, Record, index

# The table's fixed columns read these models; any other scored (model, training data) adds three columns.
# The digit-tokeniser Transformer's two columns sit beside the Transformer's, and only once it has a record.
DIGIT_TRANSFORMER = "transformer_digit"
TABLE_MODELS = (
    "gnn",
    "gnn_naive",
    "transformer",
    DIGIT_TRANSFORMER,
    "copy_source",
    "type1_shortcut",
    "paper_transformer",
)
README_MARKERS = ("<!-- results-table -->", "<!-- /results-table -->")


def _num(x: Any, nd: int = 2, dash: str = "–") -> str:
    return dash if x is None or x != x else f"{x:.{nd}f}"


def extra_rows(records: Sequence[Record]) -> list[tuple[str, str]]:
    """(model, training data) pairs beyond the fixed columns, e.g. ``("gnn", "local+extra")``."""
    seen: dict[tuple[str, str], None] = {}
    for r in records:
        pair = (r["model"], r.get("training_data") or LOCAL)
        if r.get("EM") is not None and "ceiling" not in r["model"] and r["model"] != "oracle":
            if pair[1] != LOCAL or pair[0] not in TABLE_MODELS:
                seen[pair] = None
    return list(seen)


def benchmark_table(records: Sequence[Record]) -> str:
    """Every model's EM (and molecule-only scores) per variant and test setting, beside the ceiling."""
    idx = index(records)
    extras = extra_rows(records)
    extra_idx = {pair: index(records, pair[1]) for pair in extras}
    digit = any(r["model"] == DIGIT_TRANSFORMER and r.get("EM") is not None for r in idx.values())

    def em(model: str, v: str, s: str) -> str:
        r = idx.get((model, v, s))
        return f"{r['EM']:.2f}" if r and r.get("EM") is not None else "–"

    def n_of(r: Record | None) -> str:
        return f"{r['n']:,}" if r and r.get("n") else "–"

    def mol(model: str, v: str, s: str) -> str:
        r = idx.get((model, v, s))
        return f"{r['mol_JAC']:.1f} / {r['mol_F1']:.1f}" if r and r.get("mol_JAC") is not None else "–"

    def main_k(v: str, s: str) -> str:
        r = idx.get(("gnn", v, s)) or {}
        return " / ".join(f"{r[k]:.1f}" for k in ("main_top1", "main_top5") if r.get(k) is not None) or "–"

    head = (
        "| variant | setting | ceiling EM | GNN EM | GNN norm. | GNN n | GNN main top-1 / top-5 | naive EM "
        "| Transformer EM | Transformer n |"
        + (" Transformer digit EM | Transformer digit n |" if digit else "")
        + " copy EM | T1-shortcut EM | GNN mol JAC/F1 | Transformer mol JAC/F1 "
        "| paper Transformer mol JAC/F1 |"
    )
    head += "".join(f" {m} ({td}) EM | {m} ({td}) norm. | {m} ({td}) n |" for m, td in extras)
    lines = [head, "|" + "---|" * (15 + 2 * digit + 3 * len(extras))]
    for variant in VARIANTS:
        v = variant_short(variant)
        for s in TEST_SETTINGS:
            c = ceiling_record(idx, v, s)
            full = ceiling_for(c, None)
            g = idx.get(("gnn", v, s))
            c_g = ceiling_for(c, g["n"]) if g else None
            norm = f"{g['EM'] / c_g:.3f}" if g and c_g else "–"
            row = (
                f"| {v} | {s} | {_num(full)} | {em('gnn', v, s)} | {norm} "
                f"| {n_of(g)} | {main_k(v, s)} | {em('gnn_naive', v, s)} | {em('transformer', v, s)} "
                f"| {n_of(idx.get(('transformer', v, s)))} |"
                + (f" {em(DIGIT_TRANSFORMER, v, s)} | {n_of(idx.get((DIGIT_TRANSFORMER, v, s)))} |" if digit else "")
                + f" {em('copy_source', v, s)} | {em('type1_shortcut', v, s)} "
                f"| {mol('gnn', v, s)} | {mol('transformer', v, s)} | {mol('paper_transformer', v, s)} |"
            )
            for pair in extras:
                r = extra_idx[pair].get((pair[0], v, s))
                c_r = ceiling_for(c, r["n"]) if r else None
                norm_r = r["EM"] / c_r if r and c_r else None
                row += f" {_num(r.get('EM') if r else None)} | {_num(norm_r, 3)} | {n_of(r)} |"
            lines.append(row)
    return "\n".join(lines) + "\n"


TRANSFORMER_MODELS = ("transformer", DIGIT_TRANSFORMER)
TRANSFORMER_README_MARKERS = ("<!-- transformer-table -->", "<!-- /transformer-table -->")


def transformer_table(records: Sequence[Record]) -> str:
    """One row per Transformer run of the step protocol (records with ``steps``): its budget beside the GNN's on
    the same cell, where it stopped, what it cost (wall time, one thread), and its EM beside the GNN's on each
    test setting; then the time of all runs together. Empty when no such record exists yet."""
    idx = index(records)
    runs: dict[tuple[str, str, str], dict[str, Record]] = {}
    for r in records:
        if (
            r["model"] in TRANSFORMER_MODELS
            and r.get("steps") is not None
            and (r.get("training_data") or LOCAL) == LOCAL
        ):
            runs.setdefault((r["variant"], r["model"], str(r.get("task", ""))), {})[r["setting"]] = r
    if not runs:
        return ""
    order = {variant_short(v): i for i, v in enumerate(VARIANTS)}
    lines = [
        "| variant | tokenizer | trained on | steps (GNN's) | best step | stopped by | train lines | batch "
        "| training (h, wall) | setting | EM | mol JAC | n | GNN EM | decoding (s, wall) |",
        "|" + "---|" * 15,
    ]
    train_h = decode_s = 0.0
    for (v, model, task), by_setting in sorted(runs.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][1:])):
        first = next(iter(by_setting.values()))
        gnn_steps = next(
            (g.get("train_steps") for s in by_setting if (g := idx.get(("gnn", v, s))) and g.get("train_steps")), None
        )
        hours = float(first.get("train_s") or 0.0) / 3600
        train_h += hours
        stop = (first.get("train") or {}).get("stop_reason") or "–"
        head = (
            f"| {v} | {'digit' if model == DIGIT_TRANSFORMER else 'paper'} | "
            f"{'train_cross' if task == 'cross' else 'train'} | {first['steps']:,} ({_int(gnn_steps)}) | "
            f"{_int(first.get('best_step'))} | {stop} | {_int(first.get('train_lines'))} | "
            f"{_int(first.get('batch_size'))} | {hours:.2f} |"
        )
        for s in TEST_SETTINGS:
            if (r := by_setting.get(s)) is None:
                continue
            decode_s += float(r.get("decode_seconds") or 0.0)
            g = idx.get(("gnn", v, s))
            lines.append(
                f"{head} {s} | {_num(r.get('EM'))} | {_num(r.get('mol_JAC'), 1)} | {_int(r.get('n'))} | "
                f"{_num(g.get('EM') if g else None)} | "
                f"{float(r.get('decode_seconds') or 0.0):.0f} |"
            )
            head = "|" + " |" * head.count(" |")  # the run's columns blank on its further settings
    n_runs = f"{len(runs)} run{'s' * (len(runs) != 1)}"
    lines += [
        "",
        f"{n_runs}: {train_h:.1f} hours of training, {decode_s / 3600:.1f} of decoding (wall, one thread each).",
    ]
    return "\n".join(lines) + "\n"


def _int(x: Any) -> str:
    return "–" if x is None else f"{int(x):,}"


def gnn_table(records: Sequence[Record]) -> str:
    """The GNN and its naive ablation beside the ceiling, normalised EM, and the invariance verdicts."""
    by = index(records)
    variants = [variant_short(v) for v in VARIANTS if any(r["variant"] == variant_short(v) for r in records)]
    lines = [
        "# Bag GNN on the local protocol (paper-mode EM; `results/gnn.json`)",
        "",
        "Ceiling = exact oracle (Type 1) or exact Bayes ceiling (Type 2) of the lines scored (the whole test set, "
        "or the same first-n prefix when a row was scored on fewer lines; `n` = the GNN's lines, the naive head "
        "may be scored on a shorter prefix, see `results/gnn.json`). norm = EM / ceiling.",
        "Invariance: Type 1 needs EM(out), EM(cross) >= EM(in) - 1; Type 2 needs norm(out), norm(cross) >= "
        "norm(in) - 0.01. `naive` = the same network with a head reading raw coefficients.",
        "",
        "| variant | setting | ceiling | GNN EM | GNN norm | GNN JAC | GNN F1 | mol JAC | mol F1 | naive EM | "
        "naive norm | n |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    for v in variants:
        norms: dict[str, tuple[float, float]] = {}
        for s in TEST_SETTINGS:
            c = ceiling_record(by, v, s)
            g, nv = by.get(("gnn", v, s)), by.get(("gnn_naive", v, s))
            if c is None and g is None:
                continue
            ce = ceiling_for(c, g["n"] if g else None)
            ce_nv = ceiling_for(c, nv["n"] if nv else None)
            gn = g["EM"] / ce if g and ce else None
            nn_ = nv["EM"] / ce_nv if nv and ce_nv else None
            if g is not None:
                norms[s] = (g["EM"], float("nan") if gn is None else gn)

            def f(r: Record | None, key: str) -> str:
                return _num(r[key] if r else None, dash="-")

            lines.append(
                f"| {v} | {s} | {_num(ce, dash='-')} | {f(g, 'EM')} | {_num(gn, 3, '-')} | {f(g, 'JAC')} | "
                f"{f(g, 'F1')} | {f(g, 'mol_JAC')} | {f(g, 'mol_F1')} | {f(nv, 'EM')} | {_num(nn_, 3, '-')} | "
                f"{g['n'] if g else (c['n'] if c else '-')} |"
            )
        if "test_in" in norms:
            verdicts.append(_verdict(v, norms, by))
    return "\n".join(lines + ["", "## Verdicts", "", *verdicts, ""])


def _verdict(v: str, norms: dict[str, tuple[float, float]], by: dict[tuple[str, str, str], Record]) -> str:
    """OOD invariance (Type 1 on EM, Type 2 on normalised EM) and the test_in gap to the ceiling."""
    t1 = "_T1_" in v
    ok = []
    for s in ("test_cross", "test_out"):
        if s in norms:
            a, b = norms[s], norms["test_in"]
            ok.append(a[0] >= b[0] - 1 if t1 else a[1] >= b[1] - 0.01)
    g_in = by.get(("gnn", v, "test_in"))
    c_in = ceiling_for(ceiling_record(by, v, "test_in"), g_in["n"] if g_in else None)
    if c_in is None:
        return f"- {v}: n/a"
    gap = c_in - norms["test_in"][0]
    within = "within" if gap <= 5 else "not within"
    holds = "holds" if ok and all(ok) else "FAILS" if ok else "n/a"
    return f"- {v}: OOD invariance {holds}; test_in gap to ceiling {gap:.2f} EM points ({within} 5)"


def update_readme(readme: Path, table: str, markers: tuple[str, str] = README_MARKERS) -> bool:
    """Put ``table`` between the README's markers (the results table's by default); returns whether the file
    changed (a README without the markers is left alone)."""
    text = readme.read_text(encoding="utf-8")
    start, end = markers
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), flags=re.DOTALL)
    if not pattern.search(text):
        return False
    new = pattern.sub(lambda _: f"{start}\n{table.strip()}\n{end}", text)
    if new != text:
        atomic_write_text(readme, new)
    return new != text
