"""The Transformer stage of ``gnnca bench`` (issue 15): the digit tokenizer gets its own records and run
folders, the GNN's batch size in reactions, the step floor, full formula test sets, and the facts a reviewer
checks (steps, best_step, train_lines, batch_size, tokenizer, wall time, command)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.benchmark.transformer import TransformerOptions
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
