"""scripts/mix_type_lines.py: a Type-2 variant whose training split also holds the Type-1 lines."""

from __future__ import annotations

import pytest

from gnn_chemalgebra.data.dataset import load_examples, write_toy_variant
from gnn_chemalgebra.io import read_lines

pytestmark = pytest.mark.unit


def test_training_lines_interleave_and_valid_stays_type2(tmp_path, script) -> None:
    built, out = tmp_path / "built", tmp_path / "mixed"
    n = {"train": 12, "valid": 6}
    write_toy_variant(built, "ChemAlgebra_F_T1_x1", n, seed=1)
    write_toy_variant(built, "ChemAlgebra_F_T2_x1", n, seed=2)
    (out / "ChemAlgebra_F_T2_x1").mkdir(parents=True)
    manifest = script("mix_type_lines").mix(built, "ChemAlgebra_F_T2_x1", out)
    assert manifest["splits"]["train"] == {"lines": 24, "type1": 12, "type2": 12}
    t1 = read_lines(built / "ChemAlgebra_F_T1_x1" / "src-train.txt")
    t2 = read_lines(built / "ChemAlgebra_F_T2_x1" / "src-train.txt")
    mixed = read_lines(out / "ChemAlgebra_F_T2_x1" / "src-train.txt")
    assert mixed[0::2] == t1 and mixed[1::2] == t2
    v = "src-valid.txt"
    assert read_lines(out / "ChemAlgebra_F_T2_x1" / v) == read_lines(built / "ChemAlgebra_F_T2_x1" / v)
    exs = load_examples(out, "ChemAlgebra_F_T2_x1", "train")  # labels load for both kinds of line
    assert len(exs) == 24 and all(ex.nu_in is not None for ex in exs)


def test_refuses_a_type1_name(tmp_path, script) -> None:
    with pytest.raises(SystemExit, match="Type-2"):
        script("mix_type_lines").mix(tmp_path, "ChemAlgebra_F_T1_x1", tmp_path)
