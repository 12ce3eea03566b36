"""The error breakdown of a run: counted from the predictor's reports, or read back from what ``gnnca predict --json``
wrote (one prediction pass per cell), with the same result."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.benchmark.errors import CAUSES, report_errors
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.data.dataset import load_examples, write_toy_variant
from gnn_chemalgebra.inference.predictor import Predictor
from gnn_chemalgebra.inference.run import DEFAULT_CHECKPOINT

pytestmark = pytest.mark.integration

VARIANT = "ChemAlgebra_F_T2_x1"


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A toy Type-2 variant and the bundled formula model's ``--json`` predictions for its test_in lines."""
    built = tmp_path_factory.mktemp("errs") / "built"
    write_toy_variant(built, VARIANT, {"test_in": 14}, seed=3)
    src = built / VARIANT / "src-test_in.txt"
    res = CliRunner().invoke(app, ["predict", str(src), "--extent", "bayes", "--line-type", "2", "--json"])
    assert res.exit_code == 0, res.output
    pred = built.parent / "pred.jsonl"
    pred.write_text("".join(line + "\n" for line in res.stdout.splitlines() if line.startswith("{")))
    return built, pred


def test_breakdown_from_predict_json_equals_the_predictors(toy):
    built, pred = toy
    examples = load_examples(built, VARIANT, "test_in")
    records = [json.loads(line) for line in pred.read_text().splitlines()]
    assert len(records) == len(examples) == 14
    reports = [p.to_json() for p in Predictor.from_checkpoint(str(DEFAULT_CHECKPOINT)).predict(examples, beam=1)]
    from_json = report_errors(examples, records, "formula")
    assert from_json == report_errors(examples, reports, "formula")
    assert from_json["n"] == 14 and sum(from_json["first_cause"].values()) == from_json["n_fail"]
    assert set(from_json["first_cause"]) <= {*CAUSES, "other"}


def test_error_breakdown_script_reads_predictions(toy, tmp_path):
    built, pred = toy
    script = Path(__file__).resolve().parents[2] / "scripts" / "error_breakdown.py"
    out = tmp_path / "errors.jsonl"
    args = ["--built", str(built), "--variant", VARIANT, "--split", "test_in", "--predictions", str(pred)]
    subprocess.run([sys.executable, str(script), *args, "--out", str(out)], check=True, capture_output=True)
    rec = json.loads(out.read_text())
    assert rec["n"] == 14 and rec["beam"] == 1
    assert rec["EM"] == round(100.0 * (14 - rec["errors"]["n_fail"]) / 14, 2)
    # a predictions file for other lines is refused, not silently scored
    short = tmp_path / "short.jsonl"
    short.write_text("".join(pred.read_text().splitlines(keepends=True)[:5]))
    bad = subprocess.run([sys.executable, str(script), *args[:-1], str(short)], capture_output=True, text=True)
    assert bad.returncode != 0 and "5 predictions for 14 lines" in bad.stderr
