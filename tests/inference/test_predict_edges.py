"""``gnnca predict``'s edges, through the real command line: look-alike characters and dummy atoms refused with
their place, a closed or broken output, a run that answers no line, a --draw folder it cannot write, the size
limit in one unit, and a checkpoint without calibration noted when its confidences are used."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.cli import app

pytestmark = pytest.mark.integration

GOLDEN = Path(__file__).parent / "golden"
BUNDLED = Path(__file__).resolve().parents[2] / "gnn_chemalgebra" / "checkpoints"
runner = CliRunner()
CLI = [sys.executable, "-m", "gnn_chemalgebra.cli", "predict"]


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GNNCA_CHECKPOINT", raising=False)
    monkeypatch.delenv("GNNCA_EDIT_CHECKPOINT", raising=False)


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("GNNCA_CHECKPOINT", "GNNCA_EDIT_CHECKPOINT")}


def _one_error(result, *parts: str) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("gnnca: error: "), result.stderr
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize(
    ("line", "column", "code"),
    [
        ("{1}СC(=O)Cl.{1}OCC", 4, "U+0421"),  # a Cyrillic С for C: RDKit would drop it and read another molecule
        ("{1}C6H6.{1}Сl2", 12, "U+0421"),  # the same in a formula
        ("{1}CC(=O)Cl.{1}OCC\u200b", 19, "U+200B"),  # a zero-width space
        ("CC(=O)Cl.ОCC>>", 10, "U+041E"),  # a Cyrillic О in a reaction SMILES
    ],
)
def test_a_character_outside_ascii_is_refused_with_its_column(
    tmp_path: Path, line: str, column: int, code: str
) -> None:
    src = tmp_path / "in.txt"
    src.write_text(line + "\n", encoding="utf-8")
    _one_error(runner.invoke(app, ["predict", str(src)]), f"{src}:1: character", f"({code}", f"at column {column}")
    res = runner.invoke(app, ["predict", str(src), "--skip-invalid"])
    assert res.exit_code == 2 and res.stdout == "\n"  # its place kept, and no line answered
    assert f"gnnca: skipped: {src}:1: character" in res.stderr and code in res.stderr


def test_a_formula_keeps_its_subscripts() -> None:
    res = runner.invoke(app, ["predict", "-"], input="{1}C₂H₄.{1}H₂\n")
    assert res.exit_code == 0, res.output
    assert res.stdout.strip().split(".") == ["{1}C2H6"]


def test_a_dummy_atom_is_refused() -> None:
    res = runner.invoke(app, ["predict", "-"], input="{1}*C.{1}O\n")
    _one_error(res, "<stdin>:1:", "dummy atom '*' is not a real atom")


def test_closed_stdout_is_one_line() -> None:
    cmd = ["sh", "-c", 'exec "$0" -m gnn_chemalgebra.cli predict "$1" >&-', sys.executable, str(GOLDEN / "free.in")]
    res = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=300)
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip() == "gnnca: error: standard output is closed: nothing to write the predictions to " + (
        "(redirect it to a file)"
    )


def test_a_reader_that_goes_away_is_quiet() -> None:
    """``gnnca predict f | head -1``: the writer is stopped as by SIGPIPE (141), with nothing on stderr."""
    cmd = [*CLI, str(GOLDEN / "formula_t1.in"), "--batch-size", "2", "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    try:
        assert proc.stdout.readline()
        proc.stdout.close()  # head -1 exits
        err = proc.stderr.read()
        code = proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 141, err
    assert err == b""


def test_skip_invalid_with_no_line_answered_exits_2(tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_text("{1}XX\n\n{1}CCO.{1}CC(=O)O\n")  # refused, blank, predicted below the threshold
    res = runner.invoke(app, ["predict", str(src), "--skip-invalid", "--min-confidence", "0.99"])
    assert res.exit_code == 2, res.output
    assert res.stdout == "\n\n\n"
    assert "gnnca: error: no line was answered (of 2 line(s): 1 refused, 1 abstained on)" in res.stderr
    ok = runner.invoke(app, ["predict", str(src), "--skip-invalid"])  # the good line answered: success
    assert ok.exit_code == 0 and ok.stdout.splitlines()[2]


def test_every_line_out_of_domain_is_no_line_answered(tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_text("{1}F6U.{1}H2O\n{1}Xe.{1}F2\n")  # uranium, xenon: in no training reaction
    res = runner.invoke(app, ["predict", str(src), "--min-confidence", "0.1"])
    assert res.exit_code == 2, res.output
    assert res.stdout == "\n\n" and res.stderr.count("out of domain (element(s) in no training reaction") == 2
    assert "gnnca: error: no line was answered (of 2 line(s): 0 refused, 2 abstained on)" in res.stderr
    kept = runner.invoke(app, ["predict", str(src), "--min-confidence", "0.1", "--keep-out-of-domain"])
    assert kept.exit_code == 0 and all(kept.stdout.splitlines()), kept.output


def test_a_draw_folder_that_cannot_be_written_fails_before_any_work(tmp_path: Path) -> None:
    if os.geteuid() == 0:  # root writes a read-only folder: use a read-only file system
        folder = Path("/sys")
        if not folder.is_dir() or os.access(folder, os.W_OK) and _writable(folder):
            pytest.skip("no read-only folder for root here")
    else:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o555)
    src = tmp_path / "in.txt"
    src.write_text("{1}CC(=O)Cl.{1}NCc1ccccc1\n")
    res = runner.invoke(app, ["predict", str(src), "--draw", str(folder / "eq.png")])
    _one_error(res, f"{folder}: cannot write the --draw images in this folder")
    assert res.stdout == ""  # nothing was predicted


def test_a_draw_path_inside_a_file_is_named_a_file(tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_text("{1}CC(=O)Cl.{1}NCc1ccccc1\n")
    res = runner.invoke(app, ["predict", str(src), "--draw", str(src / "eq.png")])
    _one_error(res, f"{src}: is a file, not a folder: --draw cannot write its images in it")
    res = runner.invoke(app, ["predict", str(src), "--draw", str(tmp_path / "no" / "eq.png")])
    _one_error(res, f"{tmp_path / 'no'}: folder for --draw does not exist (create it first)")


def _writable(folder: Path) -> bool:
    try:
        (folder / ".probe").write_text("")
    except OSError:
        return False
    (folder / ".probe").unlink()
    return True


def test_the_size_limit_is_stated_in_characters(tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    # 40,004 characters in 80,005 bytes with its CRLF: longer than one read, so it is skipped unkept, and counted
    src.write_bytes(("{1}C" + "é" * 40_000 + "\r\n{1}CC(=O)Cl.{1}NCc1ccccc1\n").encode())
    res = runner.invoke(app, ["predict", str(src), "--max-chars", "100"])
    _one_error(res, f"{src}:1: line of 40,004 characters is over the limit of 100 (raise it with --max-chars)")
    assert "bytes" not in res.stderr


def test_a_checkpoint_without_calibration_is_noted_when_its_confidence_is_used(tmp_path: Path) -> None:
    for name in ("gnn_default.pt", "gnn_type1_default.pt"):  # the formula model without its .trust sidecars
        shutil.copy(BUNDLED / name, tmp_path / name)
    src = tmp_path / "in.txt"
    src.write_text((GOLDEN / "formula_t1.in").read_text().splitlines()[0] + "\n{1}C6H6.{1}Cl2\n")
    base = ["predict", str(src), "--checkpoint", str(tmp_path / "gnn_default.pt")]
    for used in (["--min-confidence", "0.01"], ["--json"], ["--top-k", "2", "--columns"]):
        res = runner.invoke(app, [*base, *used])
        assert res.exit_code == 0, res.output
        notes = [ln for ln in res.stderr.splitlines() if "no calibration" in ln]
        assert len(notes) == 1, res.stderr  # once per run, not per line
        assert "the confidences are raw" in notes[0] and "gnn_default.pt" in notes[0]
    plain = runner.invoke(app, base)  # no confidence used: nothing to note
    assert plain.exit_code == 0 and "no calibration" not in plain.stderr
    bundled = runner.invoke(app, ["predict", str(src), "--json"])  # calibrated: no note
    assert bundled.exit_code == 0 and "no calibration" not in bundled.stderr
