"""``gnnca bench speed``, ``gpu`` and ``memory`` on a toy variant: the models train and predict, figures come out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.benchmark.speed import speed_table
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.data.dataset import write_toy_variant


@pytest.mark.unit
def test_table_ratios():
    res = {
        "variant": "V", "train_lines": 10, "predict_lines": 5, "threads": 1, "repeats": 3,
        "checkpoints": {"gnn": "a.pt", "transformer": "b.pt"}, "params": {"gnn": 100, "transformer": 400},
        "median": {"gnn_train": 300.0, "tf_train": 100.0, "gnn_pred": 200.0, "tf_pred1": 50.0, "tf_pred5": 10.0},
    }  # fmt: skip
    table = speed_table(res)
    assert "| parameters | 100 | 400 | 0.25 |" in table and "| 3.0x |" in table
    assert "| 200 | 50.0 | 4.0x |" in table and "| 200 | 10.0 | 20.0x |" in table


@pytest.mark.integration
def test_speed_command_on_toy(tmp_path):
    write_toy_variant(tmp_path / "built", "ChemAlgebra_F_T1_x1", {"train": 16, "valid": 4, "test_in": 6})
    out = tmp_path / "speed.json"
    # the cells' protocol monitors validation EM, which the timed epoch does not decode (it must still run)
    tf_cfg = tmp_path / "tf.yaml"
    tf_cfg.write_text(Path("configs/transformer_tiny.yaml").read_text().replace("monitor: val_loss", "monitor: val_em"))
    args = ["bench", "speed", "--built", str(tmp_path / "built"), "--train-lines", "16", "--predict-lines", "6"]
    args += ["--repeats", "1", "--gnn-config", "configs/gnn_tiny.yaml", "--tf-config", str(tf_cfg)]
    res = CliRunner().invoke(app, [*args, "--json", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["predict_lines"] == 6 and all(v > 0 for v in data["median"].values())
    assert data["params"]["gnn"] > 0 and data["params"]["transformer"] > 0
    assert "| training (reactions/s) |" in res.output
    assert data["command"].startswith("gnnca bench speed") and len(data["load_average_1min"]) == 2
    assert data["checkpoint_facts"] == {"gnn": None, "transformer": None}  # the one-epoch models were timed


@pytest.mark.integration
def test_gpu_check_runs_its_cpu_row(tmp_path):
    """Without CUDA only the CPU row is measured (the CUDA rows need a GPU machine)."""
    write_toy_variant(tmp_path / "built", "ChemAlgebra_F_T1_x1", {"train": 16, "valid": 4})
    out = tmp_path / "gpu.json"
    args = ["bench", "gpu", "--built", str(tmp_path / "built"), "--variant", "ChemAlgebra_F_T1_x1"]
    res = CliRunner().invoke(app, [*args, "--config", "configs/gnn_tiny.yaml", "--epochs", "1", "--json", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["rows"][-1]["device"] == "cpu" and data["rows"][-1]["reactions_per_s"] > 0
    assert "| cpu | False |" in res.output


@pytest.mark.integration
def test_memory_point_in_a_fresh_process(tmp_path):
    write_toy_variant(tmp_path / "built", "ChemAlgebra_F_T1_x1", {"train": 16, "valid": 4})
    args = ["bench", "memory", "--built", str(tmp_path / "built"), "--variant", "ChemAlgebra_F_T1_x1"]
    args += ["--build-limits", "", "--train-lines", "8", "--config", "configs/gnn_tiny.yaml"]
    res = CliRunner().invoke(app, [*args, "--json", str(tmp_path / "m.json")])
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "m.json").read_text())
    assert [p["lines"] for p in data["train"]] == [8] and data["train"][0]["peak_rss_mib"] > 50
    assert (
        "train_fit" not in data
        and "| one GNN training epoch (ChemAlgebra_F_T1_x1, in-memory) | 8 lines |" in res.output
    )


@pytest.mark.unit
def test_memory_extrapolation(monkeypatch):
    from gnn_chemalgebra.benchmark import memory

    monkeypatch.setattr(
        memory, "_child", lambda code, *args: 100.0 + 0.01 * int(args[1] if code == memory.BUILD_CHILD else args[2])
    )
    res = memory.measure_memory(Path("b"), "V", [1000, 3000], [2000, 4000])
    assert res["build_fit"] == {"base_mib": 100.0, "mib_per_1k_reactions": 5.0}  # 0.01 MiB per MIT split reaction
    assert res["train_fit"] == {"base_mib": 100.0, "mib_per_1k_lines": 10.0}
    assert res["train_extrapolated_mib_905175"] == round(100 + 0.01 * 905_175)
    assert "| epoch, extrapolated (+10.0 MiB / 1k) | 905,175 | 9152 |" in memory.memory_table(res)


@pytest.mark.integration
def test_timed_checkpoints_are_named_with_their_step(tmp_path):
    """A trained checkpoint given to time prediction is recorded with the step and best metrics it holds."""
    from gnn_chemalgebra.benchmark.speed import checkpoint_facts

    facts = checkpoint_facts(Path("gnn_chemalgebra/checkpoints/gnn_default.pt"))
    assert facts is not None and facts["path"].endswith("gnn_default.pt")
    assert facts["epoch"] >= 1 and facts["best_metrics"]["EM"] > 50  # the bundled model (trained by epochs)
