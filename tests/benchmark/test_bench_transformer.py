"""The Transformer stage of ``gnnca bench``: the digit tokenizer gets its own records and run
folders, the GNN's batch size in reactions, the step floor, full formula test sets, and the facts a reviewer
checks (steps, best_step, train_lines, batch_size, tokenizer, wall time, command)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.benchmark.transformer import TransformerOptions
from gnn_chemalgebra.checkpoint import load_checkpoint, save_checkpoint
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.data.dataset import write_toy_variant
from gnn_chemalgebra.errors import InputError

SPLITS = {"train": 24, "valid": 6, "test_in": 9, "test_out": 7}


@pytest.mark.unit
def test_options_name_the_digit_model_and_refuse_unknown_tokenizers() -> None:
    assert TransformerOptions(built=Path("b"), tokenizer="digit").model_name == "transformer_digit"
    assert TransformerOptions(built=Path("b"), tokenizer="paper").model_name == "transformer"
    assert TransformerOptions(built=Path("b"), tokenizer="digit", model_name="tf_x").model_name == "tf_x"
    with pytest.raises(InputError, match="paper or digit"):
        TransformerOptions(built=Path("b"), tokenizer="formula")


@pytest.mark.integration
def test_digit_stage_trains_and_scores_full_formula_test_sets(tmp_path: Path) -> None:
    write_toy_variant(tmp_path / "built", "ChemAlgebra_F_T1_x1", SPLITS)
    args = [
        "bench", "run", "--built", str(tmp_path / "built"), "--out", str(tmp_path / "results"),
        "--stages", "transformer", "--tasks", "std", "--tf-runs", str(tmp_path / "runs"),
        "--config", "configs/gnn_tiny.yaml", "--tf-config", "configs/transformer_tiny.yaml",
        "--tf-steps", "3", "--tokenizer", "digit",
    ]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    recs = json.loads((tmp_path / "results" / "transformer.json").read_text())
    assert sorted(r["setting"] for r in recs) == ["test_in", "test_out"]
    for r in recs:
        assert r["model"] == "transformer_digit" and r["tokenizer"] == "formula_digit"
        assert r["n"] == SPLITS[r["setting"]]  # formula test sets are scored whole
        assert r["steps"] == 3 and r["best_step"] is not None and r["train_lines"] == 24
        assert r["batch_size"] == 16  # configs/gnn_tiny.yaml's, not transformer_tiny's 8
        assert r["train_s"] > 0 and r["command"].startswith("gnnca bench run") and "tokenizer digit" in r["command"]
    ck = tmp_path / "runs" / "transformer_digit_F_T1_x1_standard" / "last.pt"
    assert ck.exists()


@pytest.mark.integration
def test_a_run_trained_outside_the_bench_keeps_its_training_time(tmp_path: Path) -> None:
    """The plateau run is trained by ``gnnca train`` and linked in as a cell's folder: no DONE marker, so its
    record must take the run's own training seconds, not the instant it took the bench to see it finished."""
    write_toy_variant(tmp_path / "built", "ChemAlgebra_F_T1_x1", SPLITS)
    args = [
        "bench", "run", "--built", str(tmp_path / "built"), "--out", str(tmp_path / "results"),
        "--stages", "transformer", "--tasks", "std", "--tf-runs", str(tmp_path / "runs"),
        "--config", "configs/gnn_tiny.yaml", "--tf-config", "configs/transformer_tiny.yaml", "--tf-steps", "3",
    ]  # fmt: skip
    assert CliRunner().invoke(app, args).exit_code == 0
    run = tmp_path / "runs" / "transformer_F_T1_x1_standard"
    (run / "DONE").unlink()
    ck = load_checkpoint(run / "last.pt")
    ck["meta"]["engine"]["train_seconds"] = 5000.0  # as if trained for hours elsewhere
    save_checkpoint(run / "last.pt", ck)
    (tmp_path / "results" / "transformer.json").unlink()
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "(resume)" in res.output
    recs = json.loads((tmp_path / "results" / "transformer.json").read_text())
    assert recs and all(r["steps"] == 3 for r in recs)
    assert all(r["train_s"] >= 5000.0 for r in recs)


@pytest.mark.unit
def test_the_step_floor_comes_from_the_gnn_of_the_same_training_data() -> None:
    """The extra-data GNN's 53,160 steps on F_T1_x1 must not become the local Transformer's budget."""
    from gnn_chemalgebra.benchmark.pipeline import gnn_step_floor

    gnn = [
        {"model": "gnn", "variant": "F_T1_x1", "setting": "test_cross", "train_steps": 4000},
        {"model": "gnn", "variant": "F_T1_x1", "setting": "test_cross", "train_steps": 53160,
         "training_data": "local+extra"},
        {"model": "gnn_naive", "variant": "F_T1_x1", "setting": "test_in", "train_steps": 9999},
        {"model": "gnn", "variant": "F_T1_x1", "setting": "test_in", "train_steps": 3000},
    ]  # fmt: skip
    assert gnn_step_floor(gnn, "ChemAlgebra_F_T1_x1", "cross", "local") == 4000
    assert gnn_step_floor(gnn, "ChemAlgebra_F_T1_x1", "cross", "local+extra") == 53160
    assert gnn_step_floor(gnn, "ChemAlgebra_F_T1_x1", "std", "local") == 3000
    assert gnn_step_floor(gnn, "ChemAlgebra_F_T2_x1", "std", "local") is None
