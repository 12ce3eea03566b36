"""Compact checkpoints (weight matrices stored in half precision) load as float32, full-precision checkpoints load
as before, and a file listed in a ``checksums.json`` beside it is refused in one line when its bytes changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from gnn_chemalgebra.checkpoint import compact_state, load_checkpoint, save_checkpoint
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.io import CHECKSUMS, verify_checksum, write_checksums

pytestmark = pytest.mark.unit


def _state() -> dict:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Embedding(500, 16), torch.nn.Linear(16, 4), torch.nn.LayerNorm(4))
    model = dict(net.state_dict())
    model["keys"] = torch.arange(500, dtype=torch.int64)  # an integer buffer stays as it is
    return {"model": model, "epoch": 3, "meta": {"rng": [1, 2], "kind": "toy"}, "optimizer": {"lr": 0.1}}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_a_compact_checkpoint_loads_as_float32_close_to_the_original(tmp_path: Path, dtype: str) -> None:
    full = _state()
    save_checkpoint(tmp_path / "full.pt", full)
    save_checkpoint(tmp_path / "small.pt", compact_state(load_checkpoint(tmp_path / "full.pt"), dtype))
    assert (tmp_path / "small.pt").stat().st_size < 0.75 * (tmp_path / "full.pt").stat().st_size
    raw = torch.load(tmp_path / "small.pt", weights_only=True)
    assert raw["model"]["0.weight"].dtype == getattr(torch, dtype) and raw["model"]["1.bias"].dtype == torch.float32
    assert "optimizer" not in raw
    back = load_checkpoint(tmp_path / "small.pt")
    assert back["compact"]["tensors"] == ["0.weight", "1.weight"] and back["compact"]["dtype"] == dtype
    assert back["meta"] == {"kind": "toy"} and back["epoch"] == 3  # the marker and training-only state are gone
    tol = 1e-3 if dtype == "float16" else 8e-3  # relative: 10 and 7 mantissa bits
    for name, t in full["model"].items():
        got = back["model"][name]
        assert got.dtype == t.dtype
        if name.endswith("bias") or name == "keys" or name.startswith("2."):
            assert torch.equal(got, t)  # vectors and integers are stored as they were
        else:
            assert torch.allclose(got, t, rtol=tol, atol=1e-6) and not torch.equal(got, t)
    # saved again as loaded: full precision with no marker, which loads as it was
    save_checkpoint(tmp_path / "again.pt", {k: v for k, v in back.items() if k != "compact"})
    again = load_checkpoint(tmp_path / "again.pt")
    assert "compact" not in again and torch.equal(again["model"]["0.weight"], back["model"]["0.weight"])


def test_a_full_precision_checkpoint_loads_unchanged_and_keep_leaves_tensors_float32(tmp_path: Path) -> None:
    full = _state()
    save_checkpoint(tmp_path / "full.pt", full)
    loaded = load_checkpoint(tmp_path / "full.pt")
    assert "compact" not in loaded and all(torch.equal(loaded["model"][k], v) for k, v in full["model"].items())
    kept = compact_state(loaded, "float16", keep=["0.weight"])
    assert kept["model"]["0.weight"].dtype == torch.float32 and kept["meta"]["compact"]["tensors"] == ["1.weight"]
    with pytest.raises(InputError, match="compact dtype must be one of"):
        compact_state(loaded, "int8")


def test_a_compact_marker_that_does_not_match_the_tensors_is_one_error_line(tmp_path: Path) -> None:
    state = compact_state(load_checkpoint_of(_state(), tmp_path), "float16")
    state["model"]["1.weight"] = state["model"]["1.weight"].float()  # marker says float16, file says float32
    save_checkpoint(tmp_path / "bad.pt", state)
    with pytest.raises(InputError, match=r"bad\.pt: corrupt checkpoint: compact tensor '1.weight' is not stored"):
        load_checkpoint(tmp_path / "bad.pt")


def load_checkpoint_of(state: dict, tmp_path: Path) -> dict:
    save_checkpoint(tmp_path / "src.pt", state)
    return load_checkpoint(tmp_path / "src.pt")


def test_a_listed_checkpoint_whose_bytes_changed_is_refused(tmp_path: Path) -> None:
    save_checkpoint(tmp_path / "a.pt", _state())
    save_checkpoint(tmp_path / "other.pt", _state())
    listing = write_checksums(tmp_path, ["a.pt"])
    assert listing.name == CHECKSUMS
    assert set(json.loads(listing.read_text())["files"]) == {"a.pt"}
    load_checkpoint(tmp_path / "a.pt")  # intact: loads
    data = bytearray((tmp_path / "a.pt").read_bytes())
    data[len(data) // 2] ^= 0x01
    (tmp_path / "a.pt").write_bytes(bytes(data))
    with pytest.raises(InputError) as err:
        load_checkpoint(tmp_path / "a.pt")
    msg = str(err.value)
    assert msg.startswith(f"{tmp_path / 'a.pt'}: checksum mismatch: sha256 ") and "\n" not in msg
    assert "gnnca bench compact" in msg
    load_checkpoint(tmp_path / "other.pt")  # not listed: not checked
    with pytest.raises(InputError, match="checksum mismatch"):
        verify_checksum(tmp_path / "a.pt")
    (tmp_path / CHECKSUMS).write_text("[1, 2]")
    with pytest.raises(InputError, match="unreadable checksum list"):
        load_checkpoint(tmp_path / "other.pt")
