"""configs/gnn_fast.yaml is configs/gnn_cpu.yaml with batch 128 and the sqrt-scaled learning rate, nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from gnn_chemalgebra.config import load_typed_config

pytestmark = pytest.mark.unit

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def test_fast_config_differs_from_the_cpu_config_only_in_batch_and_lr() -> None:
    cpu = load_typed_config(CONFIGS / "gnn_cpu.yaml").to_dict()
    fast = load_typed_config(CONFIGS / "gnn_fast.yaml").to_dict()
    assert (cpu["train"]["batch_size"], fast["train"]["batch_size"]) == (64, 128)
    assert fast["train"]["lr"] == pytest.approx(cpu["train"]["lr"] * 2**0.5, rel=0.02)  # 0.0014, rounded
    assert fast["run_dir"] != cpu["run_dir"]  # a long run resumes from the file it began with
    for cfg in (cpu, fast):
        del cfg["train"]["batch_size"], cfg["train"]["lr"], cfg["run_dir"]
    assert fast == cpu
