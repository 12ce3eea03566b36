"""The sidecar format: written with its version, read back when known, refused in one line when newer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.trust.annotate import Trust
from gnn_chemalgebra.trust.calibrators import KINDS, TYPE1, Calibrator, kind_of_stored
from gnn_chemalgebra.trust.linear import LinearModel
from gnn_chemalgebra.trust.sidecar import FORMAT, read_sidecar, sidecar_paths

pytestmark = pytest.mark.unit

BUNDLED = Path(__file__).resolve().parents[2] / "gnn_chemalgebra" / "checkpoints"


def _saved(tmp_path: Path) -> Path:
    ckpt = tmp_path / "gnn.pt"
    ckpt.write_bytes(b"weights")
    flat = LinearModel([0.0] * 11, [1.0] * 11, [0.0] * 11, 0.0)
    Trust("formula", Calibrator({TYPE1: flat}), None, {"extent": "bayes"}).save(ckpt)
    return ckpt


def test_a_sidecar_written_today_carries_the_format_version(tmp_path: Path) -> None:
    ckpt = _saved(tmp_path)
    d = json.loads(sidecar_paths(ckpt)[0].read_text())
    assert d["format"] == FORMAT and list(d)[0] == "format"
    assert list(d["calibrator"]["top"]) == [str(KINDS[TYPE1].stored)]  # kinds stored under their old keys
    assert Trust.load_for(ckpt) is not None


def test_a_sidecar_of_a_future_format_is_refused_in_one_line(tmp_path: Path) -> None:
    ckpt = _saved(tmp_path)
    js = sidecar_paths(ckpt)[0]
    d = json.loads(js.read_text())
    js.write_text(json.dumps({**d, "format": FORMAT + 1}))
    with pytest.raises(InputError) as exc:
        Trust.load_for(ckpt)
    msg = str(exc.value)
    assert "\n" not in msg and f"format {FORMAT + 1}" in msg and "newer" in msg and js.name in msg
    js.write_text(json.dumps({**d, "format": "two"}))
    with pytest.raises(InputError, match="not a format version"):
        read_sidecar(js)


def test_a_sidecar_without_the_field_reads_as_format_1(tmp_path: Path) -> None:
    ckpt = _saved(tmp_path)
    js = sidecar_paths(ckpt)[0]
    d = json.loads(js.read_text())
    del d["format"]
    js.write_text(json.dumps(d))
    assert Trust.load_for(ckpt).calibrator.top.keys() == {TYPE1}


@pytest.mark.parametrize("name", ["gnn_default.pt", "gnn_smiles_default.pt"])
def test_the_bundled_sidecars_read_with_named_kinds(name: str) -> None:
    d = json.loads(sidecar_paths(BUNDLED / name)[0].read_text())
    trust = Trust.load_for(BUNDLED / name)
    assert trust is not None and d["format"] == FORMAT
    assert [KINDS[k].stored for k in trust.calibrator.top] == [int(k) for k in d["calibrator"]["top"]]
    assert trust.calibrator.to_json() == d["calibrator"]  # read and written back unchanged


def test_an_unknown_stored_kind_is_one_line() -> None:
    assert kind_of_stored("3") == "limiting"
    with pytest.raises(InputError, match="unknown calibration kind '9'"):
        kind_of_stored("9")


@pytest.mark.integration
def test_gnnca_predict_refuses_a_newer_sidecar_in_one_line(tmp_path: Path) -> None:
    import shutil

    from typer.testing import CliRunner

    from gnn_chemalgebra.cli import app

    ckpt = tmp_path / "gnn.pt"
    shutil.copy(BUNDLED / "gnn_default.pt", ckpt)
    shutil.copy(BUNDLED / "gnn_type1_default.pt", tmp_path / "gnn_type1_default.pt")
    d = json.loads(sidecar_paths(BUNDLED / "gnn_default.pt")[0].read_text())
    sidecar_paths(ckpt)[0].write_text(json.dumps({**d, "format": FORMAT + 1}))
    src = tmp_path / "in.txt"
    src.write_text("{1}CH4O.{1}C2H4O2\n")
    res = CliRunner().invoke(app, ["predict", str(src), "--checkpoint", str(ckpt), "--json"])
    assert res.exit_code == 2, res.output
    err = [line for line in res.output.splitlines() if "error" in line]
    assert len(err) == 1 and "newer than this gnnca reads" in err[0] and "Traceback" not in res.output
