"""Device selection and mixed precision degrade to CPU; seeding makes torch and numpy draws repeatable."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gnn_chemalgebra.training.device import autocast, seed_everything, select_device

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
