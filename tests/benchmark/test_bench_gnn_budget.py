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


def test_a_label_with_a_comma_gives_a_run_folder_that_stays_one_checkpoint_path(tmp_path: Path) -> None:
    from gnn_chemalgebra.benchmark.gnn import run_dir_of
    from gnn_chemalgebra.io import checkpoint_paths

    opts = GnnOptions(built=tmp_path, runs=tmp_path / "runs", training_data="local+extra (identity, fine-tuned)")
    run = run_dir_of(opts, "ChemAlgebra_F_T1_x1", "gnn", "std")
    assert run.name == "gnn_std_local_extra (identity_ fine-tuned)"
    assert checkpoint_paths(str(run / "best.pt")) == [str(run / "best.pt")]
