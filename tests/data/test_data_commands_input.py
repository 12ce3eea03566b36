"""The data commands on bad input: one line naming the file and what is wrong, exit 2, no traceback."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.cli import app

pytestmark = pytest.mark.unit


def _run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args))
    return res.exit_code, res.output


@pytest.mark.parametrize("manifest", [b"[]", b'{"files": 3}', b'{"files": {"a.txt": 1}}', b"{oops", b"\xff\xfe"])
def test_verify_refuses_a_manifest_of_the_wrong_shape(tmp_path: Path, manifest: bytes) -> None:
    (tmp_path / "manifest.json").write_bytes(manifest)
    code, out = _run("data", "verify", str(tmp_path))
    assert code == 2 and "manifest.json: " in out and "Traceback" not in out
    assert len(out.strip().splitlines()) == 1


def test_verify_given_the_manifest_file_names_the_folder_it_wants(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("{}")
    code, out = _run("data", "verify", str(tmp_path / "manifest.json"))
    assert code == 2 and "is a file, not a folder" in out


def test_build_refuses_a_gz_file_that_is_not_gzip(tmp_path: Path) -> None:
    src = tmp_path / "src"
    for sub, name in (("uspto_mit_mapped", "train.txt.gz"), ("uspto_mit_tgt", "tgt-train.txt.gz")):
        (src / sub).mkdir(parents=True, exist_ok=True)
        (src / sub / name).write_bytes(b"plain text, not gzip\n")
    (src / "uspto_mit_tgt" / "tgt-train.txt.gz").write_bytes(gzip.compress(b"CCO\n"))
    code, out = _run("data", "build", "--source", str(src), "--out", str(tmp_path / "out"), "--limit", "2")
    assert code == 2 and "train.txt.gz: not a readable gzip file" in out and "Traceback" not in out


@pytest.mark.parametrize("option", ["--limit", "--workers"])
def test_build_refuses_negative_counts(tmp_path: Path, option: str) -> None:
    code, out = _run("data", "build", "--out", str(tmp_path / "out"), option, "-5")
    assert code == 2 and option in out
    assert not (tmp_path / "out").exists()


def test_formula_extra_refuses_writing_into_the_folder_it_reads(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("{}")
    code, out = _run("data", "formula-extra", str(tmp_path), "--out", str(tmp_path))
    assert code == 2 and "--out must be another folder" in out
    (tmp_path / "afile").write_text("x")
    code, out = _run("data", "formula-extra", str(tmp_path), "--out", str(tmp_path / "afile"))
    assert code == 2 and "--out is a file, not a folder" in out


def test_verify_reports_extra_counts_of_the_wrong_shape(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text('{"files": {}, "extra": 5}')
    code, out = _run("data", "verify", str(tmp_path))
    assert code == 1 and "manifest extra: not the counts" in out and "Traceback" not in out
