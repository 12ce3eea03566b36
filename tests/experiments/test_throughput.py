"""experiments/throughput.py's bookkeeping: rates from medians, the side-by-side table, byte-identical output check,
and which builder benchmark a tree runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def tp(experiment: Callable[[str], ModuleType]) -> ModuleType:
    return experiment("throughput")


def _pred(n: int, one: float, wall: float, out: Path) -> dict[str, object]:
    return {"n": n, "one_line_s": one, "wall_s": wall, "one_line_cpu_s": one, "cpu_s": wall, "peak_mib": 100.0,
            "output": str(out)}  # fmt: skip


def test_rates_come_from_medians_and_the_table_compares_trees(tp: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "p.txt"
    runs = {
        "old": {"formula": [_pred(101, 3.0, 5.0, out), _pred(101, 9.0, 6.0, out), _pred(101, 3.0, 5.0, out)]},
        "new": {"formula": [_pred(101, 2.0, 3.0, out), _pred(101, 2.0, 3.0, out)]},
    }
    med = tp.summarise(runs)
    # median wall 5.0 minus median one-line 3.0 -> 100 reactions in 2 s (the 9 s start-up outlier does not leak)
    assert med["old"]["formula"]["rxn_s"] == pytest.approx(50.0)
    assert med["new"]["formula"]["rxn_s"] == pytest.approx(100.0)
    assert med["old"]["formula"]["repeats"] == 3
    table = tp.format_table(med, ["old", "new"])
    row = next(r for r in table.splitlines() if r.startswith("| formula prediction after start-up, 1 process (wall)"))
    assert "| 50.0 | 100 | 2.00x |" in row


def test_identical_outputs_compares_bytes(tp: ModuleType, tmp_path: Path) -> None:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    a.write_text("x\ny\n")
    b.write_text("x\ny\n")
    c.write_text("x\nz\n")
    same = {"t1": {"smiles": [{"output": str(a)}]}, "t2": {"smiles": [{"output": str(b)}]}}
    diff = {"t1": {"smiles": [{"output": str(a)}]}, "t2": {"smiles": [{"output": str(c)}]}}
    assert tp.identical_outputs(same, ["t1", "t2"]) == {"smiles": True}
    assert tp.identical_outputs(diff, ["t1", "t2"]) == {"smiles": False}


def test_train_rate_reads_either_trainer_summary(tp: ModuleType) -> None:
    old = {"history": [{"train": {"reactions_per_s": 100.0}}, {"train": {"reactions_per_s": 200.0}}]}
    assert tp._train_rate(old) == pytest.approx(150.0)
    assert tp._train_rate({"history": [], "train_reactions_per_s": 42.0}) == 42.0
    over = tp._train_overrides(Path("b"), Path("r"), 10, 3, 50)
    assert over[::2] == ["--set"] * (len(over) // 2) and "train.max_steps=3" in over and "data.limit=10" in over


def test_builder_benchmark_is_found_where_each_tree_keeps_it(
    tp: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The working tree runs experiments/bench_build.py; an older revision with it under scripts/ runs that one."""
    f = tmp_path / "in.txt"
    inp = tp.Inputs(tmp_path, tmp_path, f, f, f, f, 1, 1)
    seen: list[list[str]] = []

    def fake_child(cmd: list[str], tree: object, stdout_path: Path) -> object:
        seen.append(list(cmd))
        stdout_path.write_text('{"plain_loop_rxn_per_s": 1.0, "builder_rxn_per_s": 3.0, "speedup": 3.0}\n')
        return tp.Measured(1.0, 1.0, 10.0, 0, "", 0.0)

    monkeypatch.setattr(tp, "run_child", fake_child)
    for where in ("experiments", "scripts"):
        root = tmp_path / f"tree_{where}"
        (root / where).mkdir(parents=True)
        (root / where / "bench_build.py").write_text("")
        rec = tp.measure_builder(tp.Tree(where, root, "REV"), inp, 10, 1, 1)
        assert f"{where}/bench_build.py" in seen[-1] and rec["speedup"] == 3.0
    # the working tree: the harness's own repository root holds the package and its builder benchmark
    assert (tp.REPO / "experiments" / "bench_build.py").exists() and (tp.REPO / "gnn_chemalgebra").is_dir()
