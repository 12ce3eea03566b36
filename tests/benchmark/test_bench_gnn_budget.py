"""The GNN stage's budget is --steps: a preset's epoch count must not end a longer run early."""

from pathlib import Path

import pytest

from gnn_chemalgebra.benchmark.gnn import GnnOptions, run_config

pytestmark = pytest.mark.unit


def test_steps_budget_overrides_the_presets_epochs(tmp_path: Path) -> None:
    opts = GnnOptions(built=tmp_path, config="configs/gnn_cpu.yaml", steps=106_320)  # gnn_cpu.yaml says 30 epochs
    cfg = run_config(opts, "ChemAlgebra_F_T1_x1", "gnn", "std", tmp_path / "run")
    assert cfg["train"]["max_steps"] == 106_320
    assert cfg["train"]["epochs"] == 0


def test_an_explicit_epoch_override_still_applies(tmp_path: Path) -> None:
    opts = GnnOptions(built=tmp_path, config="configs/gnn_cpu.yaml", steps=500, overrides=["train.epochs=2"])
    cfg = run_config(opts, "ChemAlgebra_F_T1_x1", "gnn", "std", tmp_path / "run")
    assert (cfg["train"]["max_steps"], cfg["train"]["epochs"]) == (500, 2)
