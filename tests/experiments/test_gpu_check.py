"""experiments/gpu_check.sh end to end in its reduced CPU mode (GPU_CHECK_DEVICE=cpu): its own tiny build, AMP
training with the mass-balance penalty, the bf16-vs-fp32 check, predict on two devices compared, a torchrun launch;
every figure a JSON file under $OUT. The same script is what a GPU machine runs, so breakage shows here first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_the_gpu_check_runs_every_step_on_the_cpu_and_writes_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "GPU_CHECK_DEVICE": "cpu", "OUT": str(out), "PYTHON": sys.executable}
    env.pop("GPU_CHECK_WORK", None)
    res = subprocess.run(
        ["bash", str(ROOT / "experiments" / "gpu_check.sh")], env=env, capture_output=True, text=True, timeout=900
    )
    assert res.returncode == 0, res.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["ok"] is True and summary["device"] == "cpu"
    assert list(summary["steps"]) == ["env", "build", "train_amp", "bench_gpu", "predict", "torchrun"]
    assert json.loads((out / "env.json").read_text())["cuda_available"] in (True, False)
    for name, steps in (("train_amp", 4), ("torchrun", 2)):
        run = json.loads((out / f"{name}.json").read_text())
        assert run["steps"] == steps and run["stop_reason"] == "max_steps" and run["losses_finite"]
        assert run["last_epoch_losses"]["penalty"] > 0  # the mass-balance penalty was on
    gpu = json.loads((out / "bench_gpu.json").read_text())
    assert gpu["mixed_precision_ok"] is True and gpu["rows"][-1]["device"] == "cpu"
    pred = json.loads((out / "predict_ChemAlgebra_F_T1_x1.json").read_text())
    assert pred["lines"] == 6 and pred["same_prediction"] == 6 and pred["max_confidence_diff"] == 0.0
    assert pred["eval_device"]["n"] == pred["eval_cpu"]["n"] == 6 and 0 <= pred["eval_cpu"]["EM"] <= 100
    assert all((out / f"{s}.log").is_file() for s in summary["steps"])
