"""SIGKILL a real `gnnca train` process at random moments and during a checkpoint write, resume, and get the
same final weights as an uninterrupted run (bit-exact on CPU); no checkpoint is ever left truncated."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from gnn_chemalgebra.checkpoint import load_checkpoint
from gnn_chemalgebra.data.dataset import write_toy_variant

pytestmark = pytest.mark.integration
VARIANT = "ChemAlgebra_F_T1_x1"
EPOCHS = 6


def _cmd(toy: Path, run_dir: Path, resume: bool) -> list[str]:
    cmd = [sys.executable, "-m", "gnn_chemalgebra.cli", "train", "--config", "configs/gnn_tiny.yaml"]
    for kv in (f"data.dir={toy}", f"data.variant={VARIANT}", f"run_dir={run_dir}", f"train.epochs={EPOCHS}",
               "train.patience=100", "train.tensorboard=false"):  # fmt: skip
        cmd += ["--set", kv]
    return cmd + (["--resume"] if resume else [])


def _env(pause: float | None = None) -> dict[str, str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env.pop("GNNCA_FAULT_PAUSE_BEFORE_RENAME", None)
    if pause:
        env["GNNCA_FAULT_PAUSE_BEFORE_RENAME"] = str(pause)
    return env


def _all_checkpoints_load(run_dir: Path) -> None:
    for p in run_dir.glob("*.pt"):
        load_checkpoint(p)  # raises on a truncated or foreign file


def _final_weights(run_dir: Path) -> dict[str, torch.Tensor]:
    ck = load_checkpoint(run_dir / "last.pt")
    assert ck["epoch"] == EPOCHS - 1
    return ck["model"]


def _toy_and_reference(tmp_path: Path) -> tuple[Path, Path, float]:
    """A toy variant, the uninterrupted run on it that an interrupted one must match, and that run's wall time
    (the random kills are placed inside it, so they land mid-run on an idle machine and on a loaded one)."""
    toy = tmp_path / "toy"
    write_toy_variant(toy, VARIANT, {"train": 48, "valid": 16})
    ref = tmp_path / "ref"
    t0 = time.perf_counter()
    subprocess.run(_cmd(toy, ref, False), check=True, env=_env(), capture_output=True, timeout=300)
    return toy, ref, time.perf_counter() - t0


def test_sigkill_anywhere_then_resume_matches_uninterrupted(tmp_path: Path) -> None:
    toy, ref, wall = _toy_and_reference(tmp_path)

    run = tmp_path / "killed"
    rng = random.Random(7)
    kills = 0
    # 1) kill while a checkpoint is being written: the temp file exists, the rename has not happened yet
    proc = subprocess.Popen(_cmd(toy, run, True), env=_env(pause=3.0), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.time() + 300  # generous: a loaded CI machine starts torch slowly
    while time.time() < deadline and not list(run.glob(".*.tmp")):
        time.sleep(0.02)
    assert list(run.glob(".*.tmp")), "the checkpoint write was never observed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    kills += 1
    _all_checkpoints_load(run)
    # 2) kills at random moments (during start-up, training, validation or saving)
    for _ in range(3):
        proc = subprocess.Popen(_cmd(toy, run, True), env=_env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)  # fmt: skip
        time.sleep(rng.uniform(0.2, 0.8) * wall)  # start-up, training, validation or saving
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
        _all_checkpoints_load(run)
    assert kills >= 2
    subprocess.run(_cmd(toy, run, True), check=True, env=_env(), capture_output=True, timeout=300)
    _all_checkpoints_load(run)

    a, b = _final_weights(ref), _final_weights(run)
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), f"parameter {k} differs after kill/resume"


def test_stale_temp_files_are_removed_on_next_save(tmp_path: Path) -> None:
    from gnn_chemalgebra.checkpoint import save_checkpoint

    stale = tmp_path / ".last.pt.abc123.tmp"
    stale.write_bytes(b"half a checkpoint")
    save_checkpoint(tmp_path / "last.pt", {"model": {"w": torch.zeros(2)}, "epoch": 0})
    assert not stale.exists()
    assert load_checkpoint(tmp_path / "last.pt")["epoch"] == 0


def test_sigterm_stops_gnnca_train_cleanly_and_resume_matches(tmp_path: Path) -> None:
    """A scheduler's SIGTERM: the process saves after the step in progress, says so in one line, exits 143."""
    toy, ref, wall = _toy_and_reference(tmp_path)

    run = tmp_path / "stopped"
    proc = subprocess.Popen(_cmd(toy, run, False), env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    deadline = time.time() + 300
    while time.time() < deadline and not (run / "last.pt").exists() and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=300)
    if proc.returncode == 0:  # the run finished before the signal landed: nothing to test on this machine
        pytest.skip("the toy run ended before SIGTERM arrived")
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err
    line = [ln for ln in err.splitlines() if ln.startswith("gnnca: ")]
    assert len(line) == 1 and "SIGTERM: training stopped after optimiser step" in line[0] and "--resume" in line[0]
    step = load_checkpoint(run / "last.pt")["step"]
    assert f"step {step};" in line[0]
    subprocess.run(_cmd(toy, run, True), check=True, env=_env(), capture_output=True, timeout=300)
    a, b = _final_weights(ref), _final_weights(run)
    assert all(torch.equal(a[k], b[k]) for k in a)
