"""A bundled checkpoint (or sidecar) whose bytes changed is refused by ``gnnca predict`` in one line, exit 2, no
traceback: the sha256 list beside it (checksums.json) is checked on load. Tested on tampered copies of the
bundled folder, as the default model and as ``--checkpoint``; the real files are never touched."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.cli import app
from gnn_chemalgebra.io import CHECKSUMS

pytestmark = pytest.mark.integration

BUNDLED = Path(__file__).resolve().parents[2] / "gnn_chemalgebra" / "checkpoints"
LINE = "{2}C2H4O2.{2}C2H6O.{1}H2O4S\n"
SMILES_LINE = "{1}CC(=O)Cl.{1}NCc1ccccc1\n"


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GNNCA_CHECKPOINT", raising=False)
    monkeypatch.delenv("GNNCA_EDIT_CHECKPOINT", raising=False)


def _copy(tmp_path: Path, flip: str | None, models: tuple[str, ...] = ("gnn_default", "gnn_type1_default")) -> Path:
    """The ``models`` (the formula pair by default), their sidecars and checksums.json copied; one byte of
    ``flip`` changed."""
    folder = tmp_path / "checkpoints"
    folder.mkdir(parents=True)
    for p in BUNDLED.iterdir():
        if p.name.startswith(models) or p.name == CHECKSUMS:
            shutil.copy(p, folder / p.name)
    if flip is not None:
        data = bytearray((folder / flip).read_bytes())
        data[len(data) // 2] ^= 0x10
        (folder / flip).write_bytes(bytes(data))
    return folder


@pytest.mark.parametrize(
    "flip", ["gnn_default.pt", "gnn_type1_default.pt", "gnn_default.pt.trust.json", "gnn_default.pt.trust.npz"]
)
def test_a_tampered_bundled_file_is_one_line_and_exit_2(tmp_path: Path, flip: str) -> None:
    folder = _copy(tmp_path, flip)
    args = ["predict", "-", "--extent", "bayes", "--checkpoint", str(folder / "gnn_default.pt")]
    res = CliRunner().invoke(app, args, input=LINE)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and res.stdout == ""
    (line,) = res.stderr.splitlines()
    assert line.startswith(f"gnnca: error: {folder / flip}: checksum mismatch: sha256 "), line


@pytest.mark.parametrize(
    "flip",
    ["gnn_smiles_default.pt", "edit_default.pt", "gnn_smiles_default.pt.trust.json", "gnn_smiles_default.pt.trust.npz"],
)
def test_a_tampered_bundled_smiles_or_edit_file_is_one_line_and_exit_2(tmp_path: Path, flip: str) -> None:
    folder = _copy(tmp_path, flip, ("gnn_smiles_default", "edit_default"))
    args = ["predict", "-", "--checkpoint", str(folder / "gnn_smiles_default.pt")]
    res = CliRunner().invoke(app, [*args, "--edit-checkpoint", str(folder / "edit_default.pt")], input=SMILES_LINE)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and res.stdout == ""
    (line,) = res.stderr.splitlines()
    assert line.startswith(f"gnnca: error: {folder / flip}: checksum mismatch: sha256 "), line


def test_the_default_model_is_checked_and_an_intact_copy_predicts(tmp_path: Path, monkeypatch) -> None:
    import gnn_chemalgebra.inference.run as run

    folder = _copy(tmp_path, "gnn_default.pt")
    monkeypatch.setattr(run, "DEFAULT_CHECKPOINT", folder / "gnn_default.pt")
    monkeypatch.setattr(run, "CHEMIST_FORMULA_CHECKPOINT", tmp_path / "absent.pt")  # a user's line: this model
    res = CliRunner().invoke(app, ["predict", "-", "--repr", "formula"], input=LINE)
    assert res.exit_code == 2 and "gnn_default.pt: checksum mismatch" in res.stderr, res.output
    intact = _copy(tmp_path / "intact", None)
    monkeypatch.setattr(run, "DEFAULT_CHECKPOINT", intact / "gnn_default.pt")
    res = CliRunner().invoke(app, ["predict", "-", "--repr", "formula", "--json"], input=LINE)
    assert res.exit_code == 0, res.output
    assert '"calibrated": true' in res.stdout  # the copied sidecars are bound to the copied checkpoint
