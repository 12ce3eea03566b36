"""scripts/subsample_train.py: a seeded share of the training lines, valid and test files unchanged."""

from __future__ import annotations

import json

import pytest

from gnn_chemalgebra.data.dataset import load_examples, write_toy_variant
from gnn_chemalgebra.data.layout import split_files
from gnn_chemalgebra.io import read_lines

pytestmark = pytest.mark.unit

V = "ChemAlgebra_F_T1_x1"


def test_share_keeps_aligned_lines_in_order_and_eval_files(tmp_path, script) -> None:
    built, out = tmp_path / "built", tmp_path / "share"
    write_toy_variant(built, V, {"train": 40, "valid": 6}, seed=1)
    m = script("subsample_train").subsample(built, V, out, 0.25, seed=3)
    assert (m["train_lines_read"], m["train_lines_kept"]) == (40, 10)
    full = [read_lines(p) for p in split_files(built, V, "train")]
    part = [read_lines(p) for p in split_files(out, V, "train")]
    rows, kept = list(zip(*full, strict=True)), list(zip(*part, strict=True))  # (src, tgt, meta) per line
    it = iter(rows)
    assert all(any(r == k for r in it) for k in kept)  # aligned lines, a subsequence of the file (its order)
    assert read_lines(out / V / "src-valid.txt") == read_lines(built / V / "src-valid.txt")
    assert len(load_examples(out, V, "train")) == 10
    saved = json.loads((out / V / "subsample_manifest.json").read_text())
    assert saved["files"].keys() >= {"src-train.txt", "src-valid.txt"} and saved["seed"] == 3


def test_the_draw_depends_on_the_seed_only(script) -> None:
    mod = script("subsample_train")
    assert mod.chosen_lines(100, 0.3, 0) == mod.chosen_lines(100, 0.3, 0)
    assert mod.chosen_lines(100, 0.3, 0) != mod.chosen_lines(100, 0.3, 1)
    assert len(mod.chosen_lines(100, 0.001, 0)) == 1
    with pytest.raises(ValueError, match="fraction"):
        mod.chosen_lines(100, 0.0, 0)


def test_missing_build_is_one_clear_error(tmp_path, script) -> None:
    with pytest.raises(SystemExit, match="no such file"):
        script("subsample_train").subsample(tmp_path, V, tmp_path / "out", 0.5)
