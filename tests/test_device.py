"""Device selection and mixed precision degrade to CPU; seeding makes torch and numpy draws repeatable."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gnn_chemalgebra.device import autocast, seed_everything, select_device

pytestmark = pytest.mark.unit


def test_auto_device_is_cpu_without_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert select_device("auto").type == "cpu"
    assert select_device("cpu").type == "cpu"


def test_autocast_is_a_noop_on_cpu() -> None:
    x = torch.randn(4, 4)
    with autocast(torch.device("cpu"), enabled=True):
        y = x @ x
    assert y.dtype == torch.float32


def test_seed_everything_repeats_draws() -> None:
    seed_everything(3)
    a = (torch.rand(3), np.random.rand(3))
    seed_everything(3)
    b = (torch.rand(3), np.random.rand(3))
    assert torch.equal(a[0], b[0]) and np.array_equal(a[1], b[1])


@pytest.mark.integration
def test_lazy_dataset_trains_like_the_in_memory_one(tmp_path) -> None:
    from gnn_chemalgebra.config import load_config
    from gnn_chemalgebra.data.dataset import write_toy_variant
    from gnn_chemalgebra.training.run import train

    write_toy_variant(tmp_path / "toy", "ChemAlgebra_F_T1_x1", {"train": 32, "valid": 8})
    runs = {}
    for lazy in (False, True):
        cfg = load_config(
            "configs/gnn_tiny.yaml",
            [f"data.dir={tmp_path / 'toy'}", f"run_dir={tmp_path / str(lazy)}", "train.epochs=2",
             f"data.lazy={str(lazy).lower()}", "train.tensorboard=false"],
        )  # fmt: skip
        runs[lazy] = [h["train"]["total"] for h in train(cfg)["history"]]
    assert runs[True] == pytest.approx(runs[False], rel=1e-6)
