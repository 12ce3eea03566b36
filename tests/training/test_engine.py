"""The training engine on a toy regression task (seconds): schedules, the monitor, early stopping in steps,
resume from the middle of an epoch bit-exact, budgets; and `gnnca train` training the edit model by name."""

from __future__ import annotations

import ast
import json
import math
import os
import signal
from pathlib import Path

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset
from typer.testing import CliRunner

from gnn_chemalgebra.checkpoint import load_checkpoint
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.config import parse_config
from gnn_chemalgebra.errors import InputError, TrainingStopped
from gnn_chemalgebra.training.engine import Monitor, Task, lr_at
from gnn_chemalgebra.training.run import train

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]


class ToyTask(Task):
    """y = x.w + noise with a dropout network: the RNG state matters, as it does for the real models."""

    name = "toy"

    def __init__(self, flat: bool = False) -> None:
        self.flat = flat  # a validation metric that never improves after the first validation

    def build(self, cfg, device, ck, gen, dist_info) -> None:
        g = torch.Generator().manual_seed(1)
        x = torch.randn(40, 3, generator=g)
        y = x @ torch.tensor([1.0, -2.0, 0.5])
        self.val = (x[:10], y[:10])
        self.model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Dropout(0.2), torch.nn.Linear(8, 1))
        self.loader = DataLoader(TensorDataset(x, y), batch_size=cfg.train.batch_size, shuffle=True, generator=gen)

    def steps_per_epoch(self) -> int:
        return len(self.loader)

    def train_batches(self, epoch: int):
        return self.loader

    def train_step(self, batch):
        x, y = batch
        return {"total": ((self.model(x).squeeze(-1) - y) ** 2).mean()}, len(x)

    @torch.no_grad()
    def validate(self):
        self.model.eval()
        x, y = self.val
        loss = float(((self.model(x).squeeze(-1) - y) ** 2).mean())
        return {"loss": 1.0 if self.flat else loss}


def _cfg(run_dir: Path, **train) -> object:
    t = {"batch_size": 8, "lr": 0.01, "epochs": 3, "eval_every": 3, "monitor": "loss", "patience": 0,
         "tensorboard": False, "progress": False, "device": "cpu", **train}  # fmt: skip
    return parse_config({"run_dir": str(run_dir), "train": t})


def _weights(run_dir: Path) -> dict[str, torch.Tensor]:
    return load_checkpoint(run_dir / "last.pt")["model"]


def test_resume_from_the_middle_of_an_epoch_is_bit_exact(tmp_path: Path) -> None:
    full = train(_cfg(tmp_path / "full"), task=ToyTask())
    assert full["steps"] == 15 and full["stop_reason"] == "epochs"
    part = train(_cfg(tmp_path / "part", max_steps=7), task=ToyTask())  # 5 steps per epoch: stops inside epoch 1
    assert part["stop_reason"] == "max_steps" and part["history"][-1]["step"] == 7
    assert load_checkpoint(tmp_path / "part" / "last.pt")["meta"]["engine"]["batch_in_epoch"] == 2
    rest = train(_cfg(tmp_path / "part"), resume=True, task=ToyTask())
    assert rest["resumed"] and rest["steps"] == 15 and [h["step"] for h in rest["history"]] == [9, 12, 15]
    a, b = _weights(tmp_path / "full"), _weights(tmp_path / "part")
    assert all(torch.equal(a[k], b[k]) for k in a)
    summary = json.loads((tmp_path / "part" / "summary.json").read_text())
    assert {"steps", "best_step", "train_lines", "batch_size", "train_s"} <= set(summary)


def test_sigterm_saves_after_the_step_in_progress_and_resume_is_bit_exact(tmp_path: Path) -> None:
    class Signalled(ToyTask):
        calls = 0

        def train_step(self, batch):
            Signalled.calls += 1
            if Signalled.calls == 7:  # during optimiser step 7: inside epoch 1, between validations at 6 and 9
                os.kill(os.getpid(), signal.SIGTERM)
            return super().train_step(batch)

    before = signal.getsignal(signal.SIGTERM)
    full = train(_cfg(tmp_path / "full"), task=ToyTask())
    with pytest.raises(TrainingStopped) as stopped:
        train(_cfg(tmp_path / "cut"), task=Signalled())
    assert stopped.value.step == 7 and stopped.value.exit_code == 128 + signal.SIGTERM
    assert "SIGTERM" in str(stopped.value) and "--resume" in str(stopped.value)
    assert signal.getsignal(signal.SIGTERM) is before  # the engine's handlers are gone after the run
    ck = load_checkpoint(tmp_path / "cut" / "last.pt")
    assert ck["step"] == 7 and ck["meta"]["engine"]["stop_reason"] == "interrupted"
    rest = train(_cfg(tmp_path / "cut"), resume=True, task=ToyTask())
    assert rest["resumed"] and rest["steps"] == full["steps"] == 15 and rest["stop_reason"] == "epochs"
    a, b = _weights(tmp_path / "full"), _weights(tmp_path / "cut")
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_early_stopping_with_patience_in_steps_and_no_training_after(tmp_path: Path) -> None:
    s = train(_cfg(tmp_path, eval_every=2, patience_steps=4, epochs=10), task=ToyTask(flat=True))
    assert s["stop_reason"] == "early_stopping" and s["best_step"] == 2 and s["steps"] == 6
    assert (tmp_path / "best.pt").exists() and load_checkpoint(tmp_path / "best.pt")["step"] == 2
    again = train(_cfg(tmp_path, eval_every=2, patience_steps=4, epochs=10), resume=True, task=ToyTask(flat=True))
    assert again["history"] == [] and again["steps"] == 6


def test_a_larger_patience_on_resume_trains_an_early_stopped_run_on(tmp_path: Path) -> None:
    s = train(_cfg(tmp_path, eval_every=2, patience=2, epochs=10), task=ToyTask(flat=True))
    assert s["stop_reason"] == "early_stopping" and s["steps"] == 6
    on = train(_cfg(tmp_path, eval_every=2, patience=4, epochs=10), resume=True, task=ToyTask(flat=True))
    assert on["steps"] == 10 and on["stop_reason"] == "early_stopping" and on["best_step"] == 2
    off = train(_cfg(tmp_path, eval_every=2, patience=0, max_steps=14, epochs=10), resume=True, task=ToyTask(flat=True))
    assert off["steps"] == 14 and off["stop_reason"] == "max_steps"


def test_no_validation_data_never_early_stops(tmp_path: Path) -> None:
    class NoVal(ToyTask):
        def validate(self):
            return {}

    s = train(_cfg(tmp_path, eval_every=2, patience=1, epochs=2), task=NoVal())
    assert s["stop_reason"] == "epochs" and s["steps"] == 10 and s["best_step"] is None
    assert (tmp_path / "last.pt").exists() and not (tmp_path / "best.pt").exists()


def test_init_from_starts_from_a_checkpoint_s_weights_and_refuses_another_architecture(tmp_path: Path) -> None:
    train(_cfg(tmp_path / "base"), task=ToyTask())
    base = _weights(tmp_path / "base")
    zero = train(_cfg(tmp_path / "zero", max_steps=1, lr=0.0, epochs=0), task=ToyTask())  # lr 0: weights as built
    tuned = train(_cfg(tmp_path / "tuned", max_steps=1, lr=0.0, epochs=0, init_from=str(tmp_path / "base" / "last.pt")),
                  task=ToyTask())  # fmt: skip
    assert all(torch.equal(base[k], v) for k, v in _weights(tmp_path / "tuned").items())
    assert not all(torch.equal(base[k], v) for k, v in _weights(tmp_path / "zero").items())
    assert tuned["history"][-1]["val"]["loss"] < zero["history"][-1]["val"]["loss"]  # trained weights predict better

    class Wider(ToyTask):
        def build(self, cfg, device, ck, gen, dist_info) -> None:
            super().build(cfg, device, ck, gen, dist_info)
            self.model = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.Dropout(0.2), torch.nn.Linear(16, 1))

    with pytest.raises(InputError, match="does not fit this model's architecture.*shape differs"):
        train(_cfg(tmp_path / "wide", init_from=str(tmp_path / "base" / "last.pt")), task=Wider())


def test_budget_is_required(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no budget"):
        train(_cfg(tmp_path, epochs=0), task=ToyTask())


def test_schedules() -> None:
    def tc(**kw):
        return parse_config({"train": {"lr": 1.0, **kw}}).train

    assert [lr_at(tc(), s, 100, 0, 1) for s in (0, 50)] == [1.0, 1.0]  # constant, no warm-up
    assert lr_at(tc(warmup_steps=4), 0, 100, 0, 1) == 0.25 and lr_at(tc(warmup_steps=4), 3, 100, 0, 1) == 1.0
    cos = tc(lr_schedule="cosine", warmup=0.1)  # 10 warm-up steps of 100
    assert lr_at(cos, 4, 100, 0, 1) == pytest.approx(0.5) and lr_at(cos, 9, 100, 0, 1) == 1.0
    assert lr_at(cos, 99, 100, 0, 1) == pytest.approx(0.01, abs=1e-3)
    noam = tc(lr_schedule="noam", warmup_steps=100)
    assert lr_at(noam, 99, 1000, 0, 1) == 1.0 and lr_at(noam, 399, 1000, 0, 1) == pytest.approx(0.5)
    ep = tc(lr_schedule="cosine_epochs")
    assert lr_at(ep, 0, 10, 0, 4) == pytest.approx(1.0) and lr_at(ep, 0, 10, 2, 4) == pytest.approx(0.55)
    assert math.isclose(lr_at(ep, 0, 10, 4, 4), 0.1)


def test_monitor_em_then_token_accuracy() -> None:
    m = Monitor("val_em,val_token_acc")  # EM; token accuracy decides while EM ties (e.g. at 0)
    a = m.key({"val_em": 0.0, "val_token_acc": 70.0})
    b = m.key({"val_em": 0.0, "val_token_acc": 74.0})
    c = m.key({"val_em": 1.5, "val_token_acc": 60.0})
    assert a < b < c
    loss = Monitor("val_loss")
    assert loss.key({"val_loss": 1.0}) > loss.key({"val_loss": 2.0})  # lower loss is better
    mixed = Monitor("val_em,val_loss")  # each name keeps its own direction: EM up, then loss down on a tie
    assert mixed.key({"val_em": 50.0, "val_loss": 1.0}) > mixed.key({"val_em": 50.0, "val_loss": 2.0})
    assert mixed.key({"val_em": 51.0, "val_loss": 9.0}) > mixed.key({"val_em": 50.0, "val_loss": 1.0})
    first_loss = Monitor("val_loss,val_token_acc")
    assert first_loss.key({"val_loss": 1.0, "val_token_acc": 80.0}) > first_loss.key(
        {"val_loss": 1.0, "val_token_acc": 70.0}
    )
    assert Monitor("EM").key({"loss": 1.0}) is None


def test_training_never_imports_inference() -> None:
    for path in (ROOT / "gnn_chemalgebra" / "training").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                mod = ("." * node.level) + (node.module or "")
                assert "inference" not in mod and "benchmark" not in mod, (path.name, mod)


def test_one_training_entry() -> None:
    """Every caller trains through training/run.py::train: no other module builds the Trainer or defines a
    top-level ``train`` / ``fit`` of its own."""
    builders, entries = [], []
    for path in sorted((ROOT / "gnn_chemalgebra").rglob("*.py")):
        rel = path.relative_to(ROOT / "gnn_chemalgebra").as_posix()
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            func = node.func if isinstance(node, ast.Call) else None
            if func is not None and getattr(func, "id", getattr(func, "attr", None)) == "Trainer":
                builders.append(rel)
        top = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
        entries += [f"{rel}::{name}" for name in top if name in ("train", "fit")]
    assert builders == ["training/run.py"] and entries == ["training/run.py::train"]


@pytest.mark.integration
def test_gnnca_train_trains_the_edit_model_by_name(tmp_path: Path) -> None:
    recs = (ROOT / "tests" / "edit_records.jsonl").read_text().splitlines()
    bal = tmp_path / "built" / "uspto_bal"
    bal.mkdir(parents=True)
    (bal / "reactions-train.jsonl").write_text("\n".join(recs[:8]) + "\n")
    (bal / "reactions-valid.jsonl").write_text("\n".join(recs[8:12]) + "\n")
    run = tmp_path / "run"
    sets = [f"data.dir={tmp_path / 'built'}", f"run_dir={run}", "train.epochs=2", "data.limit=0", "data.val_limit=0"]
    res = CliRunner().invoke(
        app, ["train", "--config", "configs/edits_tiny.yaml", *sum((["--set", s] for s in sets), [])]
    )
    assert res.exit_code == 0, res.output
    ck = load_checkpoint(run / "last.pt")
    assert ck["meta"]["kind"] == "edits" and ck["config"]["model"]["name"] == "edits" and ck["epoch"] == 1
    summary = json.loads((run / "summary.json").read_text())
    assert summary["n_train"] > 0 and [h["epoch"] for h in summary["history"]] == [0, 1]
    assert "exact_edits" in summary["history"][-1]["val"]


def test_a_monitor_the_model_does_not_report_is_refused(tmp_path: Path) -> None:
    with pytest.raises(
        InputError, match=r"'los' is not a validation metric of this model; it reports loss \(did you mean 'loss'\?\)"
    ):
        train(_cfg(tmp_path, monitor="los"), task=ToyTask())


class WideToyTask(ToyTask):
    """The toy task with a wider hidden layer: a model the toy run's checkpoint does not fit."""

    def build(self, cfg, device, ck, gen, dist_info) -> None:
        super().build(cfg, device, ck, gen, dist_info)
        self.model = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.Dropout(0.2), torch.nn.Linear(16, 1))


def test_a_fresh_run_into_a_used_run_dir_is_refused_unless_overwrite(tmp_path: Path) -> None:
    run = tmp_path / "run"
    first = train(_cfg(run), task=ToyTask())
    before = _weights(run)
    with pytest.raises(InputError, match="already holds a run .*--resume.*train.overwrite"):
        train(_cfg(run, lr=0.05), task=ToyTask())
    assert all(torch.equal(before[k], v) for k, v in _weights(run).items())  # nothing replaced
    again = train(_cfg(run, overwrite=True, lr=0.05), task=ToyTask())
    assert again["step"] == first["step"]
    steps = [json.loads(x)["step"] for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert steps == sorted(steps)  # one run's curve, not two appended
    assert "lr: 0.05" in (run / "config.yaml").read_text()  # the run's config, readable beside its checkpoints


def test_resuming_with_a_model_that_does_not_fit_names_the_mismatch(tmp_path: Path) -> None:
    run = tmp_path / "run"
    train(_cfg(run, epochs=1), task=ToyTask())
    with pytest.raises(InputError, match="does not fit the run being resumed"):
        train(_cfg(run, epochs=2), resume=True, task=WideToyTask())


def test_without_a_terminal_each_validation_is_one_stderr_line(tmp_path: Path, capsys) -> None:
    train(_cfg(tmp_path / "run", progress=True), task=ToyTask())
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("[train] step ")]
    assert len(lines) == len((tmp_path / "run" / "metrics.jsonl").read_text().splitlines()) // 2  # train + val rows
    assert lines[0].startswith("[train] step 3/15 epoch 0: loss=") and lines[0].endswith("(best)")
    train(_cfg(tmp_path / "quiet", progress=False), task=ToyTask())
    assert "[train] step" not in capsys.readouterr().err


class BrokenToyTask(ToyTask):
    """The toy task whose data cannot be loaded: a fresh run that fails before its first step."""

    def build(self, cfg, device, ck, gen, dist_info) -> None:
        raise InputError("no data", path="toy")


def test_overwrite_removes_the_old_run_only_once_the_new_one_has_loaded(tmp_path: Path) -> None:
    run = tmp_path / "run"
    train(_cfg(run), task=ToyTask())
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file() and p.name != "config.yaml"}
    with pytest.raises(InputError, match="no data"):
        train(_cfg(run, overwrite=True), task=BrokenToyTask())
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file() and p.name != "config.yaml"} == before
    assert "overwrite: false" in (run / "config.yaml").read_text()  # the saved config never replaces a run again
