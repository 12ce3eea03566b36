"""A variant is found by its short name (F_T1_x1) or its folder's name (ChemAlgebra_F_T1_x1), wherever it is given."""

from __future__ import annotations

from pathlib import Path

import pytest

from gnn_chemalgebra.data.dataset import load_examples, write_toy_variant
from gnn_chemalgebra.data.layout import split_files, variant_dir

pytestmark = pytest.mark.unit


def test_short_and_long_names_find_the_same_folder(tmp_path: Path) -> None:
    write_toy_variant(tmp_path, "ChemAlgebra_F_T1_x1", {"train": 5, "valid": 2})
    long = tmp_path / "ChemAlgebra_F_T1_x1"
    assert variant_dir(tmp_path, "F_T1_x1") == long and variant_dir(tmp_path, "ChemAlgebra_F_T1_x1") == long
    assert split_files(tmp_path, "F_T1_x1", "valid")[0] == long / "src-valid.txt"
    assert len(load_examples(tmp_path, "F_T1_x1", "train")) == 5
    assert variant_dir(tmp_path, "S_T1_x1") == tmp_path / "S_T1_x1"  # neither exists: the name as given
    (tmp_path / "S_T2_x1").mkdir()  # a stray short-named folder: a long name (what the builders write) ignores it
    assert variant_dir(tmp_path, "ChemAlgebra_S_T2_x1") == tmp_path / "ChemAlgebra_S_T2_x1"
