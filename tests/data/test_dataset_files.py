"""A split's files that do not fit together, or a bad meta line, are one located error (gnnca train exits 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.cli import app
from gnn_chemalgebra.data.dataset import load_examples, write_toy_variant
from gnn_chemalgebra.errors import InputError

pytestmark = pytest.mark.unit
VARIANT = "ChemAlgebra_F_T1_x1"


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    write_toy_variant(tmp_path, VARIANT, {"train": 6, "valid": 4})
    return tmp_path


def _edit(path: Path, lines: list[str]) -> None:
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")


def test_line_counts_that_differ_are_named_with_each_file(toy: Path) -> None:
    src = toy / VARIANT / "src-train.txt"
    _edit(src, [*src.read_text().splitlines(), "{1}CH4"])
    with pytest.raises(InputError, match=r"src-train.txt 7, tgt-train.txt 6, meta-train.jsonl 6 lines"):
        load_examples(toy, VARIANT, "train")


@pytest.mark.parametrize(
    ("line", "says"),
    [("", "not a JSON object"), ("{not json", "not a JSON object"), ("[1, 2]", "not a JSON object"),
     ('{"xi": 1}', "missing field(s) 'nu'"), ('{"nu": [["CH4", "x"]], "xi": 1}', "'nu' must be")],
)  # fmt: skip
def test_a_bad_meta_line_is_located(toy: Path, line: str, says: str) -> None:
    meta = toy / VARIANT / "meta-train.jsonl"
    rows = meta.read_text().splitlines()
    _edit(meta, [rows[0], line, *rows[2:]])
    with pytest.raises(InputError, match=r"meta-train.jsonl:2: ") as err:
        load_examples(toy, VARIANT, "train")
    assert says in str(err.value)


def test_empty_split_files_are_refused(toy: Path) -> None:
    for name in ("src-train.txt", "tgt-train.txt", "meta-train.jsonl"):
        _edit(toy / VARIANT / name, [])
    with pytest.raises(InputError, match="src-train.txt has no lines"):
        load_examples(toy, VARIANT, "train")


def test_gnnca_train_reports_it_in_one_line(toy: Path, tmp_path: Path) -> None:
    meta = toy / VARIANT / "meta-valid.jsonl"
    _edit(meta, meta.read_text().splitlines()[:-1])
    sets = [f"data.dir={toy}", f"data.variant={VARIANT}", f"run_dir={tmp_path / 'run'}", "train.tensorboard=false"]
    args = ["train", "--config", "configs/gnn_tiny.yaml"] + [x for s in sets for x in ("--set", s)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    assert "meta-valid.jsonl 3 lines" in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1
