"""``checks``: a prediction line balances, does not, or is the fallback (its source copied), counted apart."""

from __future__ import annotations

import pytest

from gnn_chemalgebra.benchmark.checks import check_runs, checks_table
from gnn_chemalgebra.data.dataset import write_toy_variant
from gnn_chemalgebra.data.layout import split_files
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.io import atomic_write_lines, read_lines

pytestmark = pytest.mark.unit


def test_balanced_unbalanced_and_fallback_lines(tmp_path):
    built = tmp_path / "built"
    write_toy_variant(built, "ChemAlgebra_F_T1_x1", {"test_in": 3})
    src = read_lines(split_files(built, "ChemAlgebra_F_T1_x1", "test_in")[0])
    tgt = read_lines(split_files(built, "ChemAlgebra_F_T1_x1", "test_in")[1])
    run = tmp_path / "runs" / "F_T1_x1" / "gnn_std"
    run.mkdir(parents=True)
    atomic_write_lines(run / "pred-test_in.txt", [tgt[0], src[1], "{1}Xx"])  # right, fallback, unparsable
    (row,) = check_runs(tmp_path / "runs", built)
    assert (row.lines, row.parsed, row.balanced, row.fallback) == (3, 2, 2, 1)
    text = checks_table([row])
    assert "| F_T1_x1 | gnn_std | test_in | 3 | 2 | 2 | 1 |" in text
    assert "2 of 3 lines balance in 1 prediction files; 1 of them are fallbacks or a predicted no reaction" in text
    assert "(balanced predictions with a reaction: 1)" in text


def test_missing_folders_or_files_are_errors(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "built").mkdir()
    with pytest.raises(InputError, match="run folder not found"):
        check_runs(tmp_path / "nope", tmp_path / "built")
    with pytest.raises(InputError, match="built data folder not found"):
        check_runs(tmp_path / "runs", tmp_path / "nope")
    with pytest.raises(InputError, match="no prediction files"):
        check_runs(tmp_path / "runs", tmp_path / "built")
