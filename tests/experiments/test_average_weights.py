"""``experiments/average_weights.py``: the mean of fine-tuned weights, refused across architectures."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from gnn_chemalgebra.checkpoint import load_checkpoint, save_checkpoint

pytestmark = pytest.mark.unit


def _ck(path: Path, w: torch.Tensor, feat: dict | None = None) -> Path:
    state = {"w": w, "steps": torch.tensor([3])}
    save_checkpoint(path, {"model": state, "featurizer": feat or {"vocab": ["C"]}, "config": {"seed": 0}})
    return path


def test_the_average_is_the_mean_and_names_its_inputs(experiment, tmp_path: Path) -> None:  # noqa: ANN001
    a = _ck(tmp_path / "a.pt", torch.tensor([1.0, 2.0]))
    b = _ck(tmp_path / "b.pt", torch.tensor([3.0, 6.0]))
    assert experiment("average_weights").main([str(a), str(b), "--out", str(tmp_path / "m.pt")]) == 0
    out = load_checkpoint(tmp_path / "m.pt")
    assert torch.equal(out["model"]["w"], torch.tensor([2.0, 4.0])) and out["model"]["w"].dtype == torch.float32
    assert torch.equal(out["model"]["steps"], torch.tensor([3])) and out["config"] == {"seed": 0}
    assert [x["checkpoint"] for x in out["meta"]["averaged_from"]] == [str(a), str(b)]


def test_other_architectures_or_featurisers_are_refused(experiment, tmp_path: Path) -> None:  # noqa: ANN001
    a = _ck(tmp_path / "a.pt", torch.tensor([1.0, 2.0]))
    wide = _ck(tmp_path / "wide.pt", torch.tensor([1.0, 2.0, 3.0]))
    other = _ck(tmp_path / "other.pt", torch.tensor([1.0, 2.0]), {"vocab": ["N"]})
    avg = experiment("average_weights")
    assert avg.main([str(a), str(wide), "--out", str(tmp_path / "m.pt")]) == 2
    assert avg.main([str(a), str(other), "--out", str(tmp_path / "m.pt")]) == 2
    assert not (tmp_path / "m.pt").exists()
