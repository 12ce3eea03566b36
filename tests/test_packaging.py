"""The wheel works outside the checkout: pyproject lists every package of the tree and maps the repository's data/
(the USPTO source reactions) into the wheel as gnn_chemalgebra.source_data; a wheel built from the tree and
installed non-editable into a target folder runs ``gnnca predict`` and ``gnnca data build`` from a folder outside
the checkout, and a source folder without the reactions is one line saying where to get them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _setuptools() -> dict:
    tomllib = pytest.importorskip("tomllib")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


@pytest.mark.unit
def test_pyproject_lists_every_package_and_maps_data_into_the_wheel() -> None:
    st = _setuptools()
    tree = {
        p.parent.relative_to(ROOT).as_posix().replace("/", ".") for p in (ROOT / "gnn_chemalgebra").rglob("__init__.py")
    }
    assert set(st["packages"]) == tree | {"gnn_chemalgebra.source_data"}
    assert st["package-dir"] == {"gnn_chemalgebra.source_data": "data"}
    assert (ROOT / "data" / "uspto_mit_mapped").is_dir() and (ROOT / "data" / "README.md").is_file()
    assert "checkpoints/*" in st["package-data"]["gnn_chemalgebra"]  # any bundled file: weights, cards, manifests


@pytest.mark.unit
def test_a_source_folder_without_the_reactions_says_where_to_get_them(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from gnn_chemalgebra.cli import app

    (tmp_path / "empty").mkdir()
    res = CliRunner().invoke(app, ["data", "build", "--out", str(tmp_path / "b"), "--source", str(tmp_path / "empty")])
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "no uspto_mit_mapped/" in lines[0] and "--source DIR" in lines[0]
    assert "rexgen_direct" in lines[0] and not (tmp_path / "b").exists()


def _run(cmd: list[str], cwd: Path, env: dict[str, str], stdin: str | None = None) -> str:
    res = subprocess.run(cmd, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"{' '.join(cmd)}: {res.stderr[-2000:]}"
    return res.stdout


@pytest.mark.integration
def test_the_installed_wheel_predicts_and_builds_from_any_folder(tmp_path: Path) -> None:
    src = tmp_path / "src"  # a copy of what the wheel is made of: no build/ or egg-info left in the checkout
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.tmp")
    for name in ("gnn_chemalgebra", "data"):
        shutil.copytree(ROOT / name, src / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    _run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"), "."], src, env)
    (wheel,) = (tmp_path / "dist").glob("gnn_chemalgebra-*.whl")
    target = tmp_path / "target"
    _run([*pip, "install", "--no-deps", "--no-index", "--target", str(target), str(wheel)], tmp_path, env)
    shutil.rmtree(src)  # nothing may read the copy the wheel came from

    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    env = {**env, "PYTHONPATH": str(target)}
    where = _run([sys.executable, "-c", "import gnn_chemalgebra; print(gnn_chemalgebra.__file__)"], cwd, env)
    assert Path(where.strip()).is_relative_to(target)
    gnnca = [sys.executable, str(target / "bin" / "gnnca")]
    out = _run([*gnnca, "predict", "-", "--extent", "bayes"], cwd, env, stdin="{4}[H][H].{1}O=C=O.{1}[Ni]\n")
    assert len(out.splitlines()) == 1 and "[Ni]" in out
    _run([*gnnca, "data", "build", "--out", "b", "--limit", "20", "--workers", "1"], cwd, env)
    assert (cwd / "b" / "manifest.json").is_file()
    assert (cwd / "b" / "ChemAlgebra_F_T1_x1" / "src-test_in.txt").is_file()
