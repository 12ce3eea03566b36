"""Ctrl-C and SIGTERM during ``gnnca predict --workers 2``: the run ends at once with ``128 + signal``, no process
prints a traceback, and the output written so far is whole lines in input order (the bundled model's answers).
The signal goes to the whole process group, as a terminal's Ctrl-C does (the workers receive it too)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

GOLDEN = Path(__file__).parent / "golden"
CASE = "formula_t1"  # 300 lines; golden/formula_t1.out is what --extent bayes writes for them


def _read_until_first_line(fd: int, deadline: float) -> bytes:
    got = b""
    while b"\n" not in got:
        left = deadline - time.monotonic()
        assert left > 0, "no output line before the deadline"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 1 << 16)
            assert chunk, "the output ended before its first line"
            got += chunk
    return got


def _read_rest(fd: int) -> bytes:
    got = b""
    while chunk := os.read(fd, 1 << 16):
        got += chunk
    return got


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_workers_ends_at_once_with_whole_lines(sig: signal.Signals, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("GNNCA_CHECKPOINT", "GNNCA_EDIT_CHECKPOINT")}
    cmd = [sys.executable, "-m", "gnn_chemalgebra.cli", "predict", str(GOLDEN / f"{CASE}.in"), "--extent", "bayes"]
    cmd += ["--workers", "2", "--batch-size", "4", "--quiet"]
    err_file = (tmp_path / "stderr.txt").open("wb")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err_file, env=env, start_new_session=True)
    try:
        out = _read_until_first_line(proc.stdout.fileno(), time.monotonic() + 240)
        os.killpg(proc.pid, sig)  # the whole job, parent and workers, as a terminal's Ctrl-C
        started = time.monotonic()
        code = proc.wait(timeout=30)
        took = time.monotonic() - started
        out += _read_rest(proc.stdout.fileno())
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        err_file.close()
    err = (tmp_path / "stderr.txt").read_text()
    assert code == 128 + sig, err
    assert took < 15, f"took {took:.1f} s to stop"
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert err.strip().splitlines() == [err.strip()], err  # one line
    assert f"{sig.name}: prediction stopped" in err
    text = out.decode()
    assert text.endswith("\n"), "the output ends inside a line"
    lines = text.splitlines()
    golden = (GOLDEN / f"{CASE}.out").read_text().splitlines()
    assert 1 <= len(lines) < len(golden)
    assert lines == golden[: len(lines)]  # whole lines, in input order, each the answer of its input line
    assert f"the first {len(lines)} line(s)" in err
    with pytest.raises(ProcessLookupError):  # no worker outlives the run
        os.killpg(proc.pid, 0)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_waiting_for_input_ends_at_once(sig: signal.Signals, tmp_path: Path) -> None:
    """``gnnca predict -`` from a pipe or a terminal, waiting for the next line after answering one: RDKit's
    substructure search had put Python's Ctrl-C handler back with SA_RESTART, so the blocked read resumed and
    Ctrl-C did nothing until the next input line."""
    env = {k: v for k, v in os.environ.items() if k not in ("GNNCA_CHECKPOINT", "GNNCA_EDIT_CHECKPOINT")}
    cmd = [sys.executable, "-m", "gnn_chemalgebra.cli", "predict", "-"]
    err_file = (tmp_path / "stderr.txt").open("wb")
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err_file, env=env, start_new_session=True
    )
    try:
        proc.stdin.write(b"{1}CC(=O)Cl.{1}NCc1ccccc1\n")  # a SMILES line: RDKit's searches run on it
        proc.stdin.flush()
        out = _read_until_first_line(proc.stdout.fileno(), time.monotonic() + 240)
        time.sleep(0.5)  # blocked in the read of the next line
        os.kill(proc.pid, sig)  # the stdin pipe stays open: only the signal can end the run
        started = time.monotonic()
        code = proc.wait(timeout=20)
        took = time.monotonic() - started
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        err_file.close()
    err = (tmp_path / "stderr.txt").read_text()
    assert code == 128 + sig and took < 15, err
    assert out == b"{1}CC(=O)NCc1ccccc1.{1}Cl\n"
    assert err.strip() == f"gnnca: {sig.name}: prediction stopped; the output holds the first 1 line(s), whole and " + (
        "in input order"
    )
