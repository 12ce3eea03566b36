"""``gnnca bench run`` plans before it works: ``--dry-run`` prints every cell (run or skip, and why), the
prerequisites and a CPU-hour estimate from the measured rates, and writes nothing; a results folder holding
records is refused unless --resume or --no-resume says what to do with them; a missing prerequisite is one line
naming the command that makes it, before any training starts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.benchmark.plan import RATES_FILE, load_rates
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.data.dataset import write_toy_variant

SPLITS = {"train": 32, "valid": 8, "test_in": 8, "test_out": 8, "train_cross": 32, "valid_cross": 8, "test_cross": 8}
VARIANTS = ("ChemAlgebra_F_T1_x1", "ChemAlgebra_F_T2_x1", "ChemAlgebra_S_T1_x1")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("plan") / "built"
    for v in VARIANTS:
        write_toy_variant(root, v, SPLITS)
    return root


def _run(built: Path, tmp: Path, *extra: str) -> tuple[int, str]:
    args = ["bench", "run", "--built", str(built), "--out", str(tmp / "results"), "--runs", str(tmp / "runs"),
            "--tf-runs", str(tmp / "tf"), "--config", "configs/gnn_tiny.yaml", "--steps", "4", "--steps-smiles", "4",
            "--tf-config", "configs/transformer_tiny.yaml", "--tf-steps", "4", *extra]  # fmt: skip
    res = CliRunner().invoke(app, args)
    return res.exit_code, res.output


@pytest.mark.unit
def test_every_rate_says_how_it_was_measured() -> None:
    rates = load_rates()
    assert rates["about"] and rates["command"].startswith("python experiments/bench_rates.py")
    groups = ("train_s_per_step", "predict_lines_per_s", "score_lines_per_s")
    for group in groups:
        for name, rate in rates[group].items():
            assert rate["value"] > 0 and rate["from"], (group, name)
    assert {"gnn_formula", "gnn_smiles", "gnn_naive", "transformer_formula", "transformer_smiles", "edits"} <= set(
        rates["train_s_per_step"]
    )
    assert RATES_FILE.parent.name == "benchmark"


@pytest.mark.integration
def test_dry_run_on_a_fresh_folder_lists_every_cell_and_the_cost_and_writes_nothing(built: Path, tmp_path: Path):
    code, out = _run(built, tmp_path, "--dry-run", "--edit-checkpoint", str(tmp_path / "runs_edit" / "best.pt"))
    assert code == 0, out
    for v in ("F_T1_x1", "F_T2_x1", "S_T1_x1"):
        assert f"ceilings {v}: run: score 24 test lines" in out and f"trivial {v}: run" in out
        assert re.search(rf"gnn {v} std: run: train in \S+ to 4 steps; predict 16 lines", out)
        assert f"transformer {v} std: run: train in" in out and f"transformer {v} cross: run" in out
    assert "gnn F_T1_x1 cross: run: Type 1: the standard model serves, no training; predict 8 lines" in out
    assert "gnn F_T2_x1 cross: run: train in" in out
    assert "naive F_T1_x1 std: run" in out and "naive F_T2_x1 std: run" in out and "naive S_T1_x1" not in out
    assert "merge: run" in out and "skip" not in out
    assert f"built data: {built}: present" in out
    assert "edit model:" in out and "MISSING: make it first with `gnnca train --config configs/edits_cpu.yaml" in out
    total = re.search(r"Estimate: ([\d.]+) CPU hours \(one thread per run\) for (\d+) of (\d+) cells", out)
    assert total and float(total.group(1)) > 0 and total.group(2) == total.group(3)
    assert "Rates: rates.json" in out
    assert not (tmp_path / "results").exists() and not (tmp_path / "runs").exists() and not (tmp_path / "tf").exists()


@pytest.mark.integration
def test_dry_run_before_the_build_names_the_data_command(tmp_path: Path):
    code, out = _run(tmp_path / "built" / "full", tmp_path, "--dry-run", "--variants", "F_T1_x1", "--stages",
                     "ceilings,gnn,merge", "--tasks", "std")  # fmt: skip
    assert code == 0, out
    assert f"MISSING: make it first with `gnnca data build --out {tmp_path / 'built' / 'full'}`" in out
    assert "ceilings F_T1_x1: run: score 47,518 test lines" in out  # the local build's test lines
    assert "gnn F_T1_x1 std: run: train in" in out and "predict 35,644 lines" in out


@pytest.mark.integration
def test_a_folder_holding_records_is_refused_without_resume_and_planned_with_it(built: Path, tmp_path: Path):
    (tmp_path / "results").mkdir()
    record = {"model": "copy_source", "variant": "F_T1_x1", "setting": "test_in", "EM": 0.0, "n": 8}
    (tmp_path / "results" / "trivial.json").write_text(json.dumps([record]))
    code, out = _run(built, tmp_path, "--stages", "trivial,merge")
    assert code == 2 and len(out.strip().splitlines()) == 1 and "Traceback" not in out
    assert "holds benchmark records (trivial.json): pass --resume" in out and "--out a new folder" in out
    code, out = _run(built, tmp_path, "--stages", "trivial", "--dry-run")
    assert code == 2 and "holds benchmark records" in out
    code, out = _run(built, tmp_path, "--stages", "trivial", "--dry-run", "--resume")
    assert code == 0 and "trivial F_T1_x1: skip: records in" in out and "trivial F_T2_x1: run" in out
    code, out = _run(built, tmp_path, "--stages", "trivial", "--dry-run", "--no-resume")
    assert code == 0 and "trivial F_T1_x1: run" in out
    code, out = _run(built, tmp_path, "--stages", "ceilings")  # other stages' records: no refusal
    assert code == 0, out


@pytest.mark.integration
def test_a_missing_edit_model_stops_the_run_before_any_training(built: Path, tmp_path: Path):
    missing = tmp_path / "elsewhere" / "best.pt"
    code, out = _run(built, tmp_path, "--edit-checkpoint", str(missing))
    assert code == 2 and len(out.strip().splitlines()) == 1 and "Traceback" not in out
    assert f"{missing}: edit model not found: make it first with" in out
    assert not (tmp_path / "results").exists() and not (tmp_path / "runs").exists()  # nothing started
    code, out = _run(built, tmp_path, "--config", str(tmp_path / "none.yaml"))
    assert code == 2 and "GNN preset not found: run from the repository root" in out and "pass --config" in out
    assert not (tmp_path / "results").exists()
    if Path("runs/edits_cpu/best.pt").exists():
        return  # trained in this checkout: not missing here
    code, out = _run(built, tmp_path, "--edit-checkpoint", "runs/edits_cpu/best.pt", "--variants", "S_T1_x1")
    assert code == 2 and "make it first with `gnnca train --config configs/edits_cpu.yaml`" in out
