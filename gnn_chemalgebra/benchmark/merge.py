"""``results/benchmark.json``: every stage's records, the ceilings and the paper's numbers in one file, then the
tables and the plot made from it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..io import atomic_write_text
from .ceilings import ceiling_for, ceiling_record
from .errors import records_error_table
from .plot import plot_benchmark
from .records import CEILING_MODELS, Record, index, load_records, merge_records, save_records
from .tables import TRANSFORMER_README_MARKERS, benchmark_table, gnn_table, transformer_table, update_readme

# Benchmark page section 6: the authors' Transformer, molecule-only JAC / F1 (coefficients ignored).
PAPER = {
    "F_T1_x1": ((63.03, 72.43), (67.39, 75.71), (23.96, 35.79)),
    "F_T1_x5": ((62.09, 71.69), (60.64, 70.59), (26.03, 38.11)),
    "F_T2_x1": ((48.89, 61.48), (35.10, 48.44), (26.35, 39.27)),
    "F_T2_x5": ((50.33, 62.80), (36.29, 49.54), (27.25, 40.26)),
    "S_T1_x1": ((44.43, 57.49), (45.74, 58.54), (24.44, 36.52)),
    "S_T1_x5": ((41.85, 54.99), (42.00, 55.17), (24.50, 36.28)),
    "S_T2_x1": ((27.63, 40.57), (24.64, 36.97), (18.03, 28.45)),
    "S_T2_x5": ((28.47, 41.54), (24.56, 36.98), (14.59, 23.50)),
}
PAPER_SETTINGS = ("test_in", "test_cross", "test_out")
PAPER_SOURCE = "Valenti et al., appendix Table 10 (molecule-only)"
# Stage files in merge order: a later file's record replaces an earlier one with its key (the GNN stage's
# ceiling records carry the prefix ceilings its rows need).
STAGE_FILES = ("ceilings", "trivial", "gnn", "transformer")


def paper_records() -> list[Record]:
    return [
        {"model": "paper_transformer", "variant": v, "setting": s, "mol_JAC": jac, "mol_F1": f1, "source": PAPER_SOURCE}
        for v, rows in PAPER.items()
        for s, (jac, f1) in zip(PAPER_SETTINGS, rows, strict=True)
    ]


def merged_records(out: Path) -> list[Record]:
    records: list[Record] = []
    for name in STAGE_FILES:
        records = merge_records(records, load_records(out / f"{name}.json"))
    return with_normalised_em(merge_records(records, paper_records()))


def with_normalised_em(records: list[Record]) -> list[Record]:
    """Every scored record gets ``EM_norm``: its EM over the exact ceiling of the same lines (the whole set, or the
    prefix it was scored on), so Type-2 rows compare across settings whose ceilings differ; ``None`` where that
    ceiling was never computed."""
    ceilings = index(r for r in records if r["model"] in CEILING_MODELS)
    out = []
    for r in records:
        if r["model"] not in CEILING_MODELS and r.get("EM") is not None and r.get("n"):
            c = ceiling_for(ceiling_record(ceilings, r["variant"], r["setting"]), int(r["n"]))
            r = {**r, "EM_norm": round(float(r["EM"]) / c, 4) if c else None}
        out.append(r)
    return out


def write_outputs(out: Path, readme: Path | None = None, log: Callable[[str], None] = lambda _: None) -> list[Record]:
    """benchmark.json, benchmark_table.md, gnn_table.md, gnn_errors_records.md (GNN records with an error
    breakdown), transformer_table.md (runs of the step protocol) and benchmark.png under ``out``; the README's
    tables when ``readme`` is given."""
    records = merged_records(out)
    save_records(out / "benchmark.json", records)
    table = benchmark_table(records)
    atomic_write_text(out / "benchmark_table.md", table)
    gnn = [r for r in records if r["model"] in (*CEILING_MODELS, "gnn", "gnn_naive")]
    if any(r["model"] == "gnn" for r in gnn):
        atomic_write_text(out / "gnn_table.md", gnn_table(gnn))
    if errors := records_error_table(records):
        atomic_write_text(out / "gnn_errors_records.md", errors)
    tf_table = transformer_table(records)
    if tf_table:
        atomic_write_text(out / "transformer_table.md", tf_table)
    plot_benchmark(records, out / "benchmark.png")
    log(f"wrote {out / 'benchmark.json'} ({len(records)} records), benchmark_table.md, benchmark.png")
    if readme is not None and update_readme(readme, table):
        log(f"updated the results table in {readme}")
    if readme is not None and tf_table and update_readme(readme, tf_table, TRANSFORMER_README_MARKERS):
        log(f"updated the Transformer runs table in {readme}")
    return records
