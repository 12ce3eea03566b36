"""Shared fixtures: one small real build of the benchmark, made once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def built_small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The benchmark built from the first 300 reactions of each bundled MIT split (a few seconds)."""
    from gnn_chemalgebra.data.build import build_all

    out = tmp_path_factory.mktemp("built_small")
    build_all(out, seed=0, workers=1, limit=300, log=lambda *_: None)
    return out
