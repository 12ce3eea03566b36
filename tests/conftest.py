"""Shared fixtures: one small real build of the benchmark, made once per test session."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture(scope="session")
def script() -> Callable[[str], ModuleType]:
    """Loads ``scripts/<name>.py`` as a module (the scripts are not a package), so tests call its functions."""

    def load(name: str) -> ModuleType:
        spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    return load


@pytest.fixture(scope="session")
def built_small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The benchmark built from the first 300 reactions of each bundled MIT split (a few seconds)."""
    from gnn_chemalgebra.data.build import build_all

    out = tmp_path_factory.mktemp("built_small")
    build_all(out, seed=0, workers=1, limit=300, log=lambda *_: None)
    return out
