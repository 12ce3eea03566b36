"""Shared fixtures: one small real build of the benchmark, made once per test session."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _loader(folder: str) -> Callable[[str], ModuleType]:
    """``load(name)``: ``<folder>/<name>.py`` executed afresh as a module (the folder is not a package), registered
    in ``sys.modules`` under ``<folder>.<name>`` while it runs and after (dataclasses look their module up)."""

    def load(name: str) -> ModuleType:
        key = f"{folder}.{name}"
        spec = importlib.util.spec_from_file_location(key, ROOT / folder / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[key] = mod
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            sys.modules.pop(key, None)
            raise
        return mod

    return load


@pytest.fixture(scope="session")
def script() -> Callable[[str], ModuleType]:
    """Loads ``scripts/<name>.py`` as a module, so tests call its functions."""
    return _loader("scripts")


@pytest.fixture(scope="session")
def experiment() -> Callable[[str], ModuleType]:
    """Loads ``experiments/<name>.py`` (harnesses, audits and studies outside the package) as a module."""
    return _loader("experiments")


@pytest.fixture(scope="session")
def built_small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The benchmark built from the first 300 reactions of each bundled MIT split (a few seconds)."""
    from gnn_chemalgebra.data.build import build_all

    out = tmp_path_factory.mktemp("built_small")
    build_all(out, seed=0, workers=1, limit=300, log=lambda *_: None)
    return out
