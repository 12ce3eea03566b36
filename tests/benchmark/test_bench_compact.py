"""``gnnca bench compact``: a folder of checkpoints rewritten with half-precision weight matrices, its sidecars
re-bound to the new files' sha256, and a checksums.json that loading checks; the bundled folder is in that form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from gnn_chemalgebra.checkpoint import load_checkpoint, save_checkpoint
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.io import CHECKSUMS, sha256_file
from gnn_chemalgebra.trust.annotate import Trust
from gnn_chemalgebra.trust.sidecar import sidecar_paths

pytestmark = pytest.mark.integration

BUNDLED = Path(__file__).resolve().parents[2] / "gnn_chemalgebra" / "checkpoints"


def _toy(seed: int) -> dict:
    torch.manual_seed(seed)
    net = torch.nn.Sequential(torch.nn.Embedding(400, 16), torch.nn.Linear(16, 8))
    return {"model": dict(net.state_dict()), "meta": {"seed": seed}, "optimizer": {"step": 7}}


def test_compact_rewrites_the_folder_and_rebinds_the_sidecars(tmp_path: Path) -> None:
    save_checkpoint(tmp_path / "gnn.pt", _toy(0))
    save_checkpoint(tmp_path / "edit.pt", _toy(1))
    before = {n: (tmp_path / n).stat().st_size for n in ("gnn.pt", "edit.pt")}
    old_edit = sha256_file(tmp_path / "edit.pt")
    Trust("smiles", meta={"edit_sha256": old_edit, "note": "kept"}).save(tmp_path / "gnn.pt")
    res = CliRunner().invoke(
        app, ["bench", "compact", str(tmp_path), "--full", "edit.pt", "--json", str(tmp_path / "rows.json")]
    )
    assert res.exit_code == 0, res.output
    rows = {r["file"]: r for r in json.loads((tmp_path / "rows.json").read_text())}
    assert rows["gnn.pt"]["dtype"] == "float16" and rows["gnn.pt"]["tensors_cast"] == 2
    assert rows["gnn.pt"]["bytes_after"] < 0.75 * before["gnn.pt"]
    assert rows["edit.pt"]["dtype"] == "float32" and rows["edit.pt"]["tensors_cast"] == 0
    assert torch.load(tmp_path / "edit.pt", weights_only=True)["model"]["0.weight"].dtype == torch.float32
    assert "optimizer" not in torch.load(tmp_path / "edit.pt", weights_only=True)  # training-only state dropped
    js, _ = sidecar_paths(tmp_path / "gnn.pt")
    side = json.loads(js.read_text())
    assert side["checkpoint_sha256"] == sha256_file(tmp_path / "gnn.pt") == rows["gnn.pt"]["sha256_after"]
    assert side["meta"] == {"edit_sha256": sha256_file(tmp_path / "edit.pt"), "note": "kept"} != old_edit
    assert Trust.load_for(tmp_path / "gnn.pt") is not None  # bound to the rewritten file
    listed = json.loads((tmp_path / CHECKSUMS).read_text())["files"]
    assert set(listed) == {"gnn.pt", "edit.pt", js.name}
    assert all(v["sha256"] == sha256_file(tmp_path / n) for n, v in listed.items())
    loaded = load_checkpoint(tmp_path / "gnn.pt")
    assert loaded["model"]["0.weight"].dtype == torch.float32 and loaded["meta"] == {"seed": 0}
    assert torch.allclose(loaded["model"]["0.weight"], _toy(0)["model"]["0.weight"], rtol=1e-3, atol=1e-6)
    # a second run changes nothing that matters: same weights, sidecar still bound, list still right
    first = sha256_file(tmp_path / "gnn.pt")
    assert CliRunner().invoke(app, ["bench", "compact", str(tmp_path), "--full", "edit.pt"]).exit_code == 0
    assert torch.equal(load_checkpoint(tmp_path / "gnn.pt")["model"]["0.weight"], loaded["model"]["0.weight"])
    assert Trust.load_for(tmp_path / "gnn.pt") is not None and first == sha256_file(tmp_path / "gnn.pt")
    # a calibration refitted into the folder re-lists its sidecar; the checkpoints' entries stay
    refit = {"edit_sha256": sha256_file(tmp_path / "edit.pt"), "note": "refitted"}
    Trust("smiles", meta=refit).save(tmp_path / "gnn.pt")
    relisted = json.loads((tmp_path / CHECKSUMS).read_text())["files"]
    assert relisted[js.name]["sha256"] == sha256_file(js) != listed[js.name]["sha256"]
    assert relisted["gnn.pt"]["sha256"] == first and set(relisted) == set(listed)
    assert Trust.load_for(tmp_path / "gnn.pt").meta["note"] == "refitted"


def test_compact_refuses_a_folder_without_checkpoints_and_an_unknown_full_name(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["bench", "compact", str(tmp_path)])
    assert res.exit_code == 2 and "no *.pt checkpoint in this folder" in res.stderr and "Traceback" not in res.output
    save_checkpoint(tmp_path / "a.pt", _toy(0))
    res = CliRunner().invoke(app, ["bench", "compact", str(tmp_path), "--full", "b.pt"])
    assert res.exit_code == 2 and "--full names no checkpoint of this folder: b.pt" in res.stderr


def test_the_bundled_folder_is_compact_listed_and_its_sidecars_bound() -> None:
    names = sorted(p.name for p in BUNDLED.glob("*.pt"))
    assert names == [
        "edit_chemist.pt", "edit_default.pt", "gnn_default.pt", "gnn_formula_chemist.pt", "gnn_smiles_chemist.pt",
        "gnn_smiles_default.pt", "gnn_type1_default.pt",
    ]  # fmt: skip
    listed = json.loads((BUNDLED / CHECKSUMS).read_text())["files"]
    shipped = names + sorted(p.name for p in [*BUNDLED.glob("*.trust.*"), *BUNDLED.glob("*.conformal.json")])
    assert sorted(listed) == sorted(shipped)
    assert all(listed[n]["sha256"] == sha256_file(BUNDLED / n) for n in shipped), "run gnnca bench compact"
    for name in names:
        raw = torch.load(BUNDLED / name, weights_only=True)
        assert "optimizer" not in raw and "compact" in json.loads(raw["meta_json"])
        assert {str(t.dtype) for t in raw["model"].values()} >= {"torch.float16", "torch.float32"}
    for name in ("gnn_default.pt", "gnn_smiles_default.pt", "gnn_smiles_chemist.pt", "gnn_formula_chemist.pt"):
        trust = Trust.load_for(BUNDLED / name)
        assert trust is not None and trust.calibrator is not None and trust.domain is not None
