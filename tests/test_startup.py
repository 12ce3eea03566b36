"""`gnnca predict` start-up: what the process imports, and that its deferrals leave predictions byte-identical.

Each test runs a real child process that calls ``cli.app`` as the installed ``gnnca`` script does, because the
deferrals only apply to a fresh ``predict`` process.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

GOLDEN = Path(__file__).parent / "inference" / "golden"
GNNCA = "import sys; from gnn_chemalgebra.cli import app; sys.exit(app())"  # what the console script runs
FORMULA_LINE = "{4}C4H8O.{4}Na+.{4}H-.{4}C5H4N2S.{4}C6H2F3NO2\n"  # line 1 of F_T1_x1 test_in

# Imported by nothing that one formula prediction needs: PyG (the network has its own layers, collation and
# padding: models.blocks, data.bagbatch, models.dense), YAML (only configs and --set values), drawing (only with
# --draw), training and plotting libraries, and torch's tracing machinery (torch._decomp/_refs are what
# torch._meta_registrations imports; sympy comes with torch._dynamo).
NOT_ON_PREDICT_PATH = (
    "torch_geometric",
    "yaml",
    "gnn_chemalgebra.inference.draw",
    "rdkit.Chem.Draw",
    "PIL",
    "sklearn",
    "tensorboard",
    "matplotlib",
    "torch._decomp",
    "torch._refs",
    "sympy",
)


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GNNCA_")}
    env["OMP_NUM_THREADS"] = "1"
    return env


def _predict(args: list[str], stdin: str | None = None, importtime: bool = False) -> subprocess.CompletedProcess:
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run(
        [sys.executable, *flags, "-c", GNNCA, "predict", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=_child_env(),
        timeout=900,
    )


def test_one_formula_line_imports_nothing_it_does_not_need() -> None:
    res = _predict(["-"], FORMULA_LINE, importtime=True)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.count("\n") == 1 and res.stdout.startswith("{")
    imported = set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)\s*$", res.stderr, re.M))
    assert "torch" in imported and "gnn_chemalgebra.inference.predictor" in imported  # the parse is right
    bad = sorted(m for m in imported if m.split(".")[0] in NOT_ON_PREDICT_PATH or m.startswith(NOT_ON_PREDICT_PATH))
    assert not bad, f"imported on the predict path: {bad[:20]}"


@pytest.mark.parametrize("case", ["formula_t1", "smiles_t1"])
def test_fresh_predict_process_reproduces_golden(case: str) -> None:
    res = _predict([str(GOLDEN / f"{case}.in"), "--extent", "bayes"])
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.splitlines() == (GOLDEN / f"{case}.out").read_text().splitlines()


GC_COUNTING = """import gc, sys
n = [0]
gc.callbacks.append(lambda phase, info: n.__setitem__(0, n[0] + (phase == "start")))
from gnn_chemalgebra.cli import app
try:
    app()
finally:
    print("collections", n[0], gc.isenabled(), file=sys.stderr)
"""


def test_garbage_collector_waits_for_the_model() -> None:
    # collections during the whole process: ~320 with the collector on from the start (start-up allocates ~130k
    # long-lived objects), a few dozen once it is paused until the model is loaded and that heap frozen
    res = subprocess.run(
        [sys.executable, "-c", GC_COUNTING, "predict", "-"],
        input=FORMULA_LINE,
        capture_output=True,
        text=True,
        env=_child_env(),
        timeout=900,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    line = [ln for ln in res.stderr.splitlines() if ln.startswith("collections ")][-1]
    count, enabled = int(line.split()[1]), line.split()[2]
    assert enabled == "True" and count < 100, line
