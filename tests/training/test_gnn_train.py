"""End to end on a toy variant: train (the steps the budget asks for, no more), weights_only checkpoint, resume,
balanced predictions, CLI."""

from __future__ import annotations

import functools
import json
import math
from collections import Counter

import pytest
import torch
from typer.testing import CliRunner

from gnn_chemalgebra.checkpoint import load_checkpoint
from gnn_chemalgebra.chem.bag import parse_bag
from gnn_chemalgebra.chem.molecule import composition
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.config import load_config
from gnn_chemalgebra.inference.predict_command import predict_lines
from gnn_chemalgebra.inference.predictor import Predictor
from gnn_chemalgebra.inference.validation import predictor_validator
from gnn_chemalgebra.training.run import train as train_run

pytestmark = pytest.mark.integration
# the one training entry with whole-line validation, as `gnnca train` calls it
train = functools.partial(train_run, validator=predictor_validator)
VARIANT = "ChemAlgebra_F_T1_x1"


def _totals(line: str) -> Counter:
    c: Counter = Counter()
    for t in parse_bag(line):
        for k, v in composition(t.mol, "formula").items():
            c[k] += t.coef * v
    return +c


def _cfg(toy, run_dir, *extra):
    return load_config(
        "configs/gnn_tiny.yaml", [f"data.dir={toy}", f"data.variant={VARIANT}", f"run_dir={run_dir}", *extra]
    )


def test_train_checkpoint_resume_predict(toy, tmp_path):
    s = train(_cfg(toy, tmp_path / "run", "train.epochs=3"))
    # the work done is what the budget asks for (counted, not timed: a loaded machine is slow, not wrong): 3 epochs
    # of ceil(40 lines / batch 16) optimiser steps, every line seen once per epoch, stopped by the epoch budget
    per_epoch = math.ceil(s["n_train"] / s["batch_size"])
    assert (s["n_train"], s["batch_size"], per_epoch) == (40, 16, 3)
    assert s["steps"] == s["step"] == 3 * per_epoch and s["stop_reason"] == "epochs" and not s["out_of_budget"]
    assert [(h["epoch"], h["step"]) for h in s["history"]] == [(0, 3), (1, 6), (2, 9)]
    last = tmp_path / "run" / "last.pt"
    raw = torch.load(last, weights_only=True)
    assert int(raw["step"]) == 9
    assert {"model", "optimizer", "epoch", "config_json", "featurizer_json", "versions_json"} <= set(raw)
    assert load_checkpoint(last)["epoch"] == 2
    assert (tmp_path / "run" / "tb").is_dir() and s["history"][-1]["val"]["EM"] >= 0
    # resume: continues at epoch 3 and matches an uninterrupted run exactly
    r = train(_cfg(toy, tmp_path / "run", "train.epochs=5"), resume=True)
    assert [h["epoch"] for h in r["history"]] == [3, 4]
    full = train(_cfg(toy, tmp_path / "full", "train.epochs=5"))
    assert r["history"][-1]["train"]["total"] == pytest.approx(full["history"][-1]["train"]["total"], rel=1e-6)
    # predictions are balanced lines in the benchmark format
    pred = Predictor.from_checkpoint(str(tmp_path / "run" / "best.pt"))
    src = (toy / VARIANT / "src-valid.txt").read_text().splitlines()
    res = predict_lines(src, pred)
    for line, rec in zip(src, res.records, strict=False):
        assert rec["prediction"].startswith("{")
        if rec["balanced"]:
            assert _totals(rec["prediction"]) == _totals(line)
    assert sum(r["balanced"] for r in res.records) >= len(src) * 0.8


def test_cli_train_and_predict(toy, tmp_path):
    runner = CliRunner()
    run_dir = tmp_path / "cli_run"
    res = runner.invoke(
        app,
        [
            "train",
            "--config",
            "configs/gnn_tiny.yaml",
            "--set",
            f"data.dir={toy}",
            "--set",
            f"data.variant={VARIANT}",
            "--set",
            f"run_dir={run_dir}",
            "--set",
            "train.epochs=2",
            "--set",
            "train.tensorboard=false",
        ],
    )
    assert res.exit_code == 0, res.output
    ck = str(run_dir / "last.pt")
    inp = tmp_path / "in.txt"
    inp.write_text("{2}C2H6O.{2}C2H4O2.{2}H2O4S\n{1}C2H6O.{1}C2H4O2\n{x}H2O\n")
    bad = runner.invoke(app, ["predict", str(inp), "--checkpoint", ck])
    assert bad.exit_code == 2
    assert f"gnnca: error: {inp}:3:" in bad.output
    ok = runner.invoke(app, ["predict", str(inp), "--checkpoint", ck, "--skip-invalid", "--json", "--beam", "2"])
    assert ok.exit_code == 0, ok.output
    rows = [json.loads(x) for x in ok.stdout.splitlines()]
    assert [r["line"] for r in rows] == [1, 2, 3] and "error" in rows[2]  # one output line per input line
    recs = rows[:2]
    assert {"molecules", "extent", "beam", "not_covered"} <= set(recs[0])
    assert "skipped 1 of 3 line(s)" in ok.output
    stdin = runner.invoke(app, ["predict", "-", "--checkpoint", ck], input="C2H6O.C2H4O2\n")
    assert stdin.exit_code == 0 and stdin.stdout.strip().startswith("{")
    # the checkpoint fixes the representation: SMILES for a formula checkpoint are refused, not converted
    rxn = runner.invoke(app, ["predict", "-", "--checkpoint", ck], input="CCO.CC(=O)O>OS(=O)(=O)O>\n")
    assert rxn.exit_code == 2 and "the checkpoint reads formulas" in rxn.output
    mixed = runner.invoke(app, ["predict", "-", "--checkpoint", ck], input="C2H6O.C2H4O2\nCCO.CC(=O)O>>\n")
    assert mixed.exit_code == 2 and "<stdin>:2:" in mixed.output and mixed.stdout.count("\n") == 1


def test_resume_inside_an_epoch_matches_an_uninterrupted_run(toy, tmp_path):
    """Validation every 2 steps (3 per epoch here): a run stopped at step 4, inside epoch 1, resumes exactly."""
    sets = ("train.epochs=3", "train.eval_every=2", "train.tensorboard=false", "model.dropout=0.1")
    full = train(_cfg(toy, tmp_path / "full", *sets))
    part = train(_cfg(toy, tmp_path / "part", *sets, "train.max_steps=4"))
    assert part["stop_reason"] == "max_steps" and part["epoch"] == 1
    rest = train(_cfg(toy, tmp_path / "part", *sets), resume=True)
    assert rest["steps"] == full["steps"] == 9
    a = load_checkpoint(tmp_path / "full" / "last.pt")["model"]
    b = load_checkpoint(tmp_path / "part" / "last.pt")["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_fine_tuning_keeps_the_start_models_by_product_vocabulary(toy, tmp_path):
    """A run started from a checkpoint (train.init_from) indexes by-products as that checkpoint does, even when
    its own training lines rank them in another order: the by-product head's rows keep their meaning."""
    train(_cfg(toy, tmp_path / "base", "train.epochs=1"))
    raw = torch.load(tmp_path / "base" / "last.pt", weights_only=True)
    feat = json.loads(raw["featurizer_json"])
    built = feat["vocab"]
    assert len(built) >= 3
    order = [0, *range(len(built) - 1, 0, -1)]  # <unk> first, the by-products reversed
    feat["vocab"] = [built[i] for i in order]
    raw["featurizer_json"] = json.dumps(feat)
    raw["model"]["extra_comp"] = raw["model"]["extra_comp"][order]
    start = tmp_path / "start.pt"
    torch.save(raw, start)
    train(_cfg(toy, tmp_path / "tuned", "train.epochs=1", f"train.init_from={start}"))
    tuned = load_checkpoint(tmp_path / "tuned" / "last.pt")
    assert tuned["featurizer"]["vocab"] == feat["vocab"] != built
    assert torch.equal(tuned["model"]["extra_comp"], raw["model"]["extra_comp"])
