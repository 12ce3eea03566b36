"""The toy F_T1_x1 variant and the tiny GNN config the training tests share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gnn_chemalgebra.config import load_config
from gnn_chemalgebra.data.dataset import write_toy_variant

TOY_VARIANT = "ChemAlgebra_F_T1_x1"


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("toy")
    write_toy_variant(out, TOY_VARIANT, {"train": 40, "valid": 16})
    return out


@pytest.fixture
def tiny_cfg() -> Callable[..., dict[str, Any]]:
    """``tiny_cfg(toy, run_dir, "a.b=c", ...)``: configs/gnn_tiny.yaml on the toy variant."""

    def make(toy: Path, run_dir: Path, *extra: str) -> dict[str, Any]:
        sets = [f"data.dir={toy}", f"data.variant={TOY_VARIANT}", f"run_dir={run_dir}", *extra]
        return load_config("configs/gnn_tiny.yaml", sets)

    return make
