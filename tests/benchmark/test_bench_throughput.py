"""bench_throughput's bookkeeping: rates from medians, the side-by-side table, byte-identical output check."""

from __future__ import annotations

from pathlib import Path

import pytest

from gnn_chemalgebra.benchmark.throughput import (
    _train_overrides,
    _train_rate,
    format_table,
    identical_outputs,
    summarise,
)

pytestmark = pytest.mark.unit


def _pred(n: int, one: float, wall: float, out: Path) -> dict[str, object]:
    return {"n": n, "one_line_s": one, "wall_s": wall, "one_line_cpu_s": one, "cpu_s": wall, "peak_mib": 100.0,
            "output": str(out)}  # fmt: skip


def test_rates_come_from_medians_and_the_table_compares_trees(tmp_path: Path) -> None:
    out = tmp_path / "p.txt"
    runs = {
        "old": {"formula": [_pred(101, 3.0, 5.0, out), _pred(101, 9.0, 6.0, out), _pred(101, 3.0, 5.0, out)]},
        "new": {"formula": [_pred(101, 2.0, 3.0, out), _pred(101, 2.0, 3.0, out)]},
    }
    med = summarise(runs)
    # median wall 5.0 minus median one-line 3.0 -> 100 reactions in 2 s (the 9 s start-up outlier does not leak)
    assert med["old"]["formula"]["rxn_s"] == pytest.approx(50.0)
    assert med["new"]["formula"]["rxn_s"] == pytest.approx(100.0)
    assert med["old"]["formula"]["repeats"] == 3
    table = format_table(med, ["old", "new"])
    row = next(r for r in table.splitlines() if r.startswith("| formula prediction after start-up, 1 process (wall)"))
    assert "| 50.0 | 100 | 2.00x |" in row


def test_identical_outputs_compares_bytes(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    a.write_text("x\ny\n")
    b.write_text("x\ny\n")
    c.write_text("x\nz\n")
    same = {"t1": {"smiles": [{"output": str(a)}]}, "t2": {"smiles": [{"output": str(b)}]}}
    diff = {"t1": {"smiles": [{"output": str(a)}]}, "t2": {"smiles": [{"output": str(c)}]}}
    assert identical_outputs(same, ["t1", "t2"]) == {"smiles": True}
    assert identical_outputs(diff, ["t1", "t2"]) == {"smiles": False}


def test_train_rate_reads_either_trainer_summary() -> None:
    old = {"history": [{"train": {"reactions_per_s": 100.0}}, {"train": {"reactions_per_s": 200.0}}]}
    assert _train_rate(old) == pytest.approx(150.0)
    assert _train_rate({"history": [], "train_reactions_per_s": 42.0}) == 42.0
    over = _train_overrides(Path("b"), Path("r"), 10, 3, 50)
    assert over[::2] == ["--set"] * (len(over) // 2) and "train.max_steps=3" in over and "data.limit=10" in over
