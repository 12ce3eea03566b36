"""``gnnca predict --checkpoint`` with a trained Transformer checkpoint: detected by its kind, predicted through the
same stream as a GNN (text, ``--json``, ``--skip-invalid``, ``--top-k``, the Python API), the lines the sequence
model's own decoder writes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from gnn_chemalgebra import load_predictor
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.config import load_config
from gnn_chemalgebra.inference.predictor import Predictor, PredictorOptions
from gnn_chemalgebra.inference.transformer import TransformerPredictor
from gnn_chemalgebra.training.run import train
from gnn_chemalgebra.training.seq2seq import load_model, predict_lines

pytestmark = pytest.mark.integration

VARIANT = "ChemAlgebra_F_T1_x1"
TINY = Path(__file__).resolve().parents[2] / "configs" / "transformer_tiny.yaml"
SRC = ["{1}H2.{1}O2", "{2}CH4.{2}Cl2", "{3}NaCl.{3}H2O", "{4}CO2.{4}H2", "{5}Na+.{5}OH-", "{3}N2.{3}H2"]
TGT = [".".join(reversed(s.split("."))) for s in SRC]  # a copy task: the terms reversed


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny Transformer trained for 150 steps on the copy task (the config of ``gnnca train`` for tests)."""
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("tf")
    d = root / "built" / VARIANT
    d.mkdir(parents=True)
    for split in ("train", "valid"):
        (d / f"src-{split}.txt").write_text("\n".join(SRC) + "\n")
        (d / f"tgt-{split}.txt").write_text("\n".join(TGT) + "\n")
    overrides = [f"data.dir={root / 'built'}", f"data.variant={VARIANT}", f"run_dir={root / 'run'}"]
    train(load_config(TINY, [*overrides, "train.max_steps=150", "train.eval_every=50"]), resume=False)
    return root / "run" / "last.pt"


def _predict(args: list[str]) -> tuple[int, list[str], str]:
    res = CliRunner().invoke(app, ["predict", *args])
    return res.exit_code, res.stdout.splitlines(), res.output


def test_the_checkpoint_kind_is_detected(checkpoint: Path) -> None:
    pred = Predictor.from_checkpoint(checkpoint)
    assert isinstance(pred, TransformerPredictor) and (pred.repr, pred.vtype) == ("formula", 1)
    with pytest.raises(Exception, match="--set decode"):
        Predictor.from_checkpoint(checkpoint, options=PredictorOptions(overrides=("decode.balance_beam=2",)))


def test_predict_writes_the_models_own_lines(checkpoint: Path, tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_text("\n".join(SRC) + "\n")
    # the benchmark's convention: the model's own lines, no explicit rule (H2 + O2 would be written as water)
    code, lines, out = _predict([str(src), "--checkpoint", str(checkpoint), "--byproducts", "benchmark"])
    assert code == 0, out
    expected = [h[0] for h in predict_lines(load_model(checkpoint), SRC, beam=1, max_len=40)]
    assert lines == expected
    assert sum(a == b for a, b in zip(lines, TGT, strict=True)) >= len(SRC) - 1  # it learned the copy task


def test_workers_write_the_lines_of_one_process(checkpoint: Path, tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_text("\n".join(SRC) + "\n")
    one = _predict([str(src), "--checkpoint", str(checkpoint), "--batch-size", "2"])
    two = _predict([str(src), "--checkpoint", str(checkpoint), "--batch-size", "2", "--workers", "2"])
    assert one[0] == two[0] == 0 and one[1] == two[1] and len(one[1]) == len(SRC)


def test_json_records_skip_invalid_and_top_k(checkpoint: Path, tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_text(f"{SRC[0]}\nnot a line\nCCO.CC(=O)O\n\n{SRC[1]}\n")
    code, lines, out = _predict([str(src), "--checkpoint", str(checkpoint), "--json", "--skip-invalid", "--top-k", "2",
                                  "--byproducts", "benchmark"])  # fmt: skip
    assert code == 0, out
    assert len(lines) == 5  # refused and blank lines keep their places
    refused = [json.loads(lines[i]) for i in (1, 2)]
    assert [(r["line"], r["prediction"], "error" in r) for r in refused] == [(2, "", True), (3, "", True)]
    assert "SMILES" in json.dumps(refused[1])  # the formula checkpoint refuses a SMILES line
    for i in (0, 4):
        rec = json.loads(lines[i])
        assert rec["line"] == i + 1 and rec["model"] == "transformer" and rec["fallback"] is False
        # --top-k 2 searches a beam of at least 5 (an alternative's probability does not depend on K)
        assert len(rec["beam"]) == 5 and rec["beam"][0]["prediction"] == rec["prediction"]
        assert rec["calibrated"] is False and 0 < rec["confidence"] <= 1
        assert math.isclose(rec["confidence"], math.exp(rec["beam"][0]["logp"]), abs_tol=1e-3)
        assert rec["top_k"][0]["prediction"] == rec["prediction"]


def test_python_api_and_help_name_the_transformer(checkpoint: Path) -> None:
    (p,) = load_predictor(checkpoint).predict(SRC[2])
    assert p.prediction == predict_lines(load_model(checkpoint), [SRC[2]], beam=1, max_len=40)[0][0]
    assert not p.fallback and p.roles == ()
    code, _, out = _predict(["--help"])
    assert code == 0 and "Transformer checkpoint" in " ".join(out.split())
