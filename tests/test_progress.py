"""A progress bar on stderr for more than 1,000 lines, only on a terminal, off with --quiet."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from gnn_chemalgebra import progress


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.unit
def test_wanted_only_for_long_jobs_on_a_terminal() -> None:
    assert progress.wanted(1001, stream=_Tty())
    assert not progress.wanted(1000, stream=_Tty())  # "more than 1,000 lines"
    assert not progress.wanted(5000, quiet=True, stream=_Tty())
    assert not progress.wanted(5000, stream=io.StringIO())  # a file or pipe


@pytest.mark.unit
def test_track_yields_every_item_with_or_without_a_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    err = _Tty()
    monkeypatch.setattr(sys, "stderr", err)
    assert list(progress.track(range(1500), 1500, "t", enabled=False)) == list(range(1500))
    assert err.getvalue() == ""
    assert list(progress.track(range(1500), 1500, "t", enabled=True)) == list(range(1500))
    assert "1500" in err.getvalue()  # tqdm wrote its bar to stderr


def _run_on_terminal(args: list[str], cwd: Path) -> tuple[int, str, str]:
    """Run with stderr on a pseudo-terminal (80 columns) and stdout on a pipe."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=slave, cwd=cwd)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    out = proc.stdout.read() if proc.stdout else b""
    proc.wait()
    os.close(master)
    return proc.returncode, out.decode(), b"".join(chunks).decode(errors="replace")


@pytest.fixture
def eval_files(tmp_path: Path) -> Path:
    (tmp_path / "tgt.txt").write_text("{1}H2O.{2}CO2\n" * 1200)
    (tmp_path / "pred.txt").write_text("{1}H2O.{2}CO2\n" * 1200)
    (tmp_path / "small.txt").write_text("{1}H2O.{2}CO2\n" * 1000)
    return tmp_path


GNNCA = [sys.executable, "-m", "gnn_chemalgebra.cli"]


@pytest.mark.integration
@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_evaluate_bar_on_a_terminal_only(eval_files: Path) -> None:
    args = [*GNNCA, "evaluate", "--pred", "pred.txt", "--tgt", "tgt.txt", "--repr", "formula"]
    rc, out, err = _run_on_terminal(args, eval_files)
    assert rc == 0 and "1200" in out
    assert "evaluate tgt.txt" in err and "/1200" in err  # the bar, on stderr
    rc, out, err = _run_on_terminal([*args, "--quiet"], eval_files)
    assert rc == 0 and err == ""
    small = [*GNNCA, "evaluate", "--pred", "small.txt", "--tgt", "small.txt", "--repr", "formula"]
    rc, _, err = _run_on_terminal(small, eval_files)
    assert rc == 0 and err == ""  # 1,000 lines: no bar
    piped = subprocess.run(args, cwd=eval_files, capture_output=True, text=True, check=True)
    assert piped.stderr == "" and "1200" in piped.stdout  # stderr not a terminal: no bar characters


@pytest.mark.integration
def test_predict_bar_follows_the_same_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """gnnca predict draws its bar through progress.wanted (threshold lowered and a terminal faked here)."""
    from typer.testing import CliRunner

    from gnn_chemalgebra.cli import app

    src = tmp_path / "in.txt"
    src.write_text("{2}C7H8.{3}O2\n{1}C6H12O6\n{1}C2H6O.{1}C2H4O2\n")
    monkeypatch.setattr(progress, "MIN_LINES", 2)
    monkeypatch.setattr(progress, "_is_terminal", lambda stream: True)
    shown = CliRunner().invoke(app, ["predict", str(src)])
    assert shown.exit_code == 0, shown.output
    assert "predict" in shown.stderr and "/3" in shown.stderr
    quiet = CliRunner().invoke(app, ["predict", str(src), "--quiet"])
    assert quiet.exit_code == 0 and "/3" not in quiet.stderr
    assert quiet.stdout == shown.stdout  # the bar never touches the predictions
