"""The one training engine behind ``gnnca train`` for the bag GNN, the bond-edit model and the Transformer.

A model contributes a small :class:`Task` (data, model, batches, loss, validation metrics); the
:class:`Trainer` owns everything else: seeds and RNG state, device and data-parallel ranks, the optimiser and
the learning-rate schedule, the budgets (epochs, optimiser steps, wall clock), validation every
``train.eval_every`` steps or at the end of each epoch, early stopping on ``train.monitor`` with a patience in
validations or in optimiser steps, atomic ``last.pt`` / ``best.pt`` checkpoints, exact resume (also from the
middle of an epoch), TensorBoard and ``metrics.jsonl`` through :mod:`.logging`, a progress bar and
``summary.json``. SIGTERM or SIGINT (a scheduler's preemption, a session's end, Ctrl-C) stops a single-process
run after the optimiser step in progress with ``last.pt`` saved, so ``--resume`` loses nothing (a second SIGINT
aborts at once). The way in is :func:`gnn_chemalgebra.training.run.train`.

Validation that needs a higher floor (the GNN's whole-line EM needs the predictor) is injected as
``validator``: a factory called with the built task that returns a callable giving more metrics; a task that
takes it says so (:attr:`Task.takes_validator`).

The task contract is :mod:`.task`; the learning-rate schedules and stopping rules are :mod:`.schedule`; RNG
states, stop signals and fine-tuning start weights are :mod:`.run_state`. Their public names are importable here.
"""

from __future__ import annotations

import difflib
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import torch

from ..checkpoint import load_checkpoint, save_checkpoint, versions
from ..config import Config
from ..device import seed_everything, select_device
from ..errors import InputError, TrainingStopped
from ..io import atomic_write_text
from ..kinds import kind
from . import distributed
from .logging import NullLogger, RunLogger, progress_bar
from .run_state import StopRequests, init_weights, restore_rng, rng_state
from .schedule import Monitor, lr_at, still_stopped
from .task import Metrics, Task, ValidatorFactory

__all__ = ["FINISHED", "RUN_FILES", "Metrics", "Monitor", "Task", "Trainer", "ValidatorFactory", "lr_at"]

RUN_FILES = ("last.pt", "best.pt", "metrics.jsonl", "summary.json")  # what a run leaves in run_dir (and tb/)
FINISHED = ("early_stopping", "target")  # a run that stopped for these trains no further on --resume


# --------------------------------------------------------------------------- the loop
class Trainer:
    """One training run of ``task`` as ``cfg`` says; :meth:`run` trains (or continues from ``<run_dir>/last.pt``)
    and returns the run's summary.

    The steps of a run are methods: :meth:`setup` (seeds, device, ranks, the task, the optimiser, and the state
    of a resumed run or the weights of ``train.init_from``), :meth:`train_epoch` and :meth:`optimizer_step`,
    :meth:`evaluate` (validation, logs, early stopping in :meth:`early_stopping`, ``best.pt`` / ``last.pt``),
    :meth:`budget_hit` and :meth:`check_stop_requests` (a signal: ``last.pt`` saved, :class:`TrainingStopped`).
    Everything a resume needs is in :attr:`st` (plain data) and the RNG states saved beside it.
    """

    def __init__(self, task: Task, cfg: Config, validator: ValidatorFactory | None = None) -> None:
        self.task, self.cfg, self.tcfg = task, cfg, cfg.train
        self.validator = validator if task.takes_validator else None
        self.run_dir = Path(cfg.run_dir)
        self.last_path, self.best_path = self.run_dir / "last.pt", self.run_dir / "best.pt"
        self.st: dict[str, Any] = {  # the resumable state (plain data)
            "step": 0,
            "epoch": 0,  # the epoch in progress (or next to start)
            "batch_in_epoch": 0,  # batches of that epoch already trained
            "best_key": None,
            "best_step": None,
            "best_metrics": {},
            "bad_evals": 0,
            "last_eval_step": None,
            "stop_reason": "",
            "train_seconds": 0.0,
            "train_reactions": 0,
        }
        self.history: list[dict[str, Any]] = []
        self.sums: dict[str, float] = {}  # loss sums since the last validation, weighted by reactions
        self.window_n, self.window_t = 0, 0.0  # reactions and seconds since the last validation
        self.replaces = False  # a fresh run replacing the one in run_dir (train.overwrite)
        self.finished = False  # early stopping or the target ended the run: no final validation, no --resume
        self.stops = StopRequests()

    # ----------------------------------------------------------------------- the run
    def run(self, resume: bool = False) -> dict[str, Any]:
        self.setup(resume)
        try:
            if not self.dist.enabled:  # ranks would need to agree on the step to stop at: default signal action
                self.stops.install()
            while not self.finished and not self.out_of_epochs() and not self.budget_hit():
                if not self.train_epoch():
                    break
            if self.st["last_eval_step"] != self.st["step"] and not self.finished:
                self.evaluate()  # the final weights are always validated and saved
        finally:
            self.close()
        return self.summary()

    # ----------------------------------------------------------------------- set-up and resume
    def setup(self, resume: bool) -> None:
        tcfg = self.tcfg
        if not (tcfg.epochs or tcfg.max_steps or tcfg.max_minutes):
            raise InputError("no budget: set train.epochs, train.max_steps or train.max_minutes")
        if tcfg.num_threads:
            torch.set_num_threads(tcfg.num_threads)
        seed_everything(tcfg.seed)
        self.device = select_device(tcfg.device)
        self.dist = distributed.init(self.device)
        self.ck = self.resume_checkpoint(resume)
        self.build()
        self.restore()
        self.start_logging()
        self.reopen_early_stopped()
        if self.ck is not None:
            self.gen.set_state(self.loader_state)
            restore_rng(self.ck["meta"]["rng"], self.ck)
        self.model.train()

    def resume_checkpoint(self, resume: bool) -> dict[str, Any] | None:
        """``last.pt`` when resuming and it exists (else None: a fresh run). A fresh run into a ``run_dir`` that
        holds one already is refused unless ``train.overwrite``: its checkpoints and curves would be replaced."""
        held = [n for n in RUN_FILES if (self.run_dir / n).exists()] if self.dist.is_main else []
        # rank 0 decides (the ranks may see different file systems), so no rank is left waiting in a collective
        if distributed.broadcast_flag(bool(held) and not resume and not self.tcfg.overwrite, self.dist):
            raise InputError(f"run_dir already holds a run ({', '.join(held) or 'on rank 0'}): pass --resume to "
                             "continue it, --set train.overwrite=true to start it again, or another run_dir",
                             path=str(self.run_dir))  # fmt: skip
        self.replaces = bool(held) and not resume  # removed in start_logging, once data and model have loaded
        ck = load_checkpoint(self.last_path) if resume and self.last_path.exists() else None
        if ck is not None and "engine" not in (ck.get("meta") or {}):
            raise InputError("checkpoint written by an older trainer: resume needs a fresh run_dir",
                             path=str(self.last_path))  # fmt: skip
        if resume and ck is None and self.dist.is_main:
            print(f"[train] no {self.last_path} yet: starting fresh", file=sys.stderr)
        return ck

    def build(self) -> None:
        """The task (data and model, after seeding), the optimiser, the injected validator and the monitor."""
        tcfg, task = self.tcfg, self.task
        t_build = time.perf_counter()
        self.gen = torch.Generator()  # the data loaders' generator, saved with every checkpoint
        self.gen.manual_seed(tcfg.seed)
        task.build(self.cfg, self.device, self.ck, self.gen, self.dist)
        self.build_s = time.perf_counter() - t_build
        self.model = task.model
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        opt_cls = torch.optim.Adam if tcfg.optimizer == "adam" else torch.optim.AdamW
        fused = task.fused_optimizer and all(
            p.device.type in ("cpu", "cuda") and p.is_floating_point() for p in self.params
        )
        self.opt = opt_cls(self.params, lr=tcfg.lr, betas=tuple(tcfg.betas), weight_decay=tcfg.weight_decay,
                           **({"fused": True} if fused else {}))  # fmt: skip
        self.extra_val = self.validator(task) if self.validator is not None and self.dist.is_main else None
        self.monitor = Monitor(tcfg.monitor)
        self.loader_state = self.gen.get_state()  # the loader generator at the start of the epoch in progress

    def restore(self) -> None:
        """A resumed run's weights, optimiser and state; a fresh one's ``train.init_from`` weights."""
        ck, init_from = self.ck, self.tcfg.init_from
        if ck is None and init_from:
            init_weights(self.model, init_from)
            if self.dist.is_main:
                print(f"[train] weights from {init_from} (fresh optimiser and schedule)", file=sys.stderr)
        if ck is not None:
            try:
                self.model.load_state_dict(ck["model"])
            except RuntimeError:
                changed = _changed_keys(ck.get("config") or {}, self.cfg.to_dict(), ("model", "data"))
                why = f" ({', '.join(changed)} changed)" if changed else ""
                raise InputError(f"the config's model does not fit the run being resumed{why}: resume with the "
                                 "config it was started with, or train into another run_dir",
                                 path=str(self.last_path)) from None  # fmt: skip
            self.opt.load_state_dict(ck["optimizer"])
            self.st.update(ck["meta"]["engine"])
            self.loader_state = ck["rng_loader"]

    def start_logging(self) -> None:
        """Step budget, wall-clock start, TensorBoard / ``metrics.jsonl`` (rank 0) and the progress bar."""
        tcfg, st = self.tcfg, self.st
        self.total_steps = tcfg.max_steps or tcfg.epochs * max(self.task.steps_per_epoch(), 1)
        self.log: RunLogger | NullLogger = NullLogger()
        if self.dist.is_main:
            if self.replaces:  # train.overwrite: only now that the new run has loaded is the old one removed
                for name in RUN_FILES:
                    (self.run_dir / name).unlink(missing_ok=True)
                shutil.rmtree(self.run_dir / "tb", ignore_errors=True)  # the old run's TensorBoard curves
                print(f"[train] train.overwrite: the run in {self.run_dir} is started again", file=sys.stderr)
            purge = st["step"] + 1 if self.ck is not None else None
            self.log = RunLogger(self.run_dir, tensorboard=tcfg.tensorboard, purge_step=purge)
            self.save_config()
        self.t_start = time.perf_counter()
        self.bar = progress_bar(self.total_steps or None, st["step"], "train", tcfg.progress and self.dist.is_main)

    def save_config(self) -> None:
        """The run's full config (defaults filled in) as ``config.yaml`` in ``run_dir``, readable without torch; every
        checkpoint carries it too."""
        import yaml

        cfg = self.cfg.to_dict()
        cfg["train"]["overwrite"] = False  # training with this file again must not silently replace this run
        text = yaml.safe_dump(cfg, sort_keys=False)
        atomic_write_text(self.run_dir / "config.yaml", text)

    def reopen_early_stopped(self) -> None:
        """A run that stopped for early stopping or its target trains no further on ``--resume``, unless the
        patience settings no longer stop it."""
        st = self.st
        self.finished = st["stop_reason"] in FINISHED
        if self.finished and st["stop_reason"] == "early_stopping" and not still_stopped(st, self.tcfg):
            print(f"[train] resuming a run that stopped early at step {st['step']}: train.patience / "
                  "train.patience_steps no longer stop it", file=sys.stderr)  # fmt: skip
            self.finished, st["stop_reason"] = False, ""

    # ----------------------------------------------------------------------- training
    def train_epoch(self) -> bool:
        """Train the rest of the epoch in progress; False when the run ends inside it (a budget, early stopping
        or the target). A resume inside an epoch replays its order from the saved loader state and skips the
        batches already trained."""
        st, gen = self.st, self.gen
        skip = int(st["batch_in_epoch"])
        if skip:
            gen.set_state(self.loader_state)
            rng_now = torch.get_rng_state()
        else:
            self.loader_state = gen.get_state()
        for i, batch in enumerate(self.task.train_batches(int(st["epoch"]))):
            if i < skip:
                if i == skip - 1:
                    torch.set_rng_state(rng_now)  # skipped batches leave the RNG as the checkpoint had it
                continue
            if self.budget_hit():
                return False
            self.optimizer_step(batch)
            st["batch_in_epoch"] = i + 1
            if self.tcfg.eval_every and st["step"] % self.tcfg.eval_every == 0 and self.evaluate():
                self.finished = True
                return False
            self.check_stop_requests()
        st["epoch"] += 1
        st["batch_in_epoch"] = 0
        self.loader_state = gen.get_state()
        if not self.tcfg.eval_every and self.evaluate():
            self.finished = True
            return False
        return True

    def optimizer_step(self, batch: Any) -> None:
        """Learning rate, forward and losses, backward, clipping, the optimiser step, the running loss sums."""
        st, tcfg = self.st, self.tcfg
        t0 = time.perf_counter()
        for g in self.opt.param_groups:
            g["lr"] = lr_at(tcfg, int(st["step"]), self.total_steps, int(st["epoch"]), tcfg.epochs)
        losses, n = self.task.train_step(batch)
        self.opt.zero_grad(set_to_none=True)
        losses["total"].backward()
        if tcfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(self.params, tcfg.grad_clip)
        self.opt.step()
        st["step"] += 1
        st["train_reactions"] += n
        self.window_n += n
        for k, v in losses.items():
            self.sums[k] = self.sums.get(k, 0.0) + float(v.detach()) * n
        dt = time.perf_counter() - t0
        self.window_t += dt
        st["train_seconds"] += dt
        if self.bar is not None:
            self.bar.update(1)

    def out_of_epochs(self) -> bool:
        if self.tcfg.epochs and self.st["epoch"] >= self.tcfg.epochs:
            self.st["stop_reason"] = "epochs"
            return True
        return False

    def budget_hit(self) -> bool:
        """Step or wall-clock budget spent (rank 0's clock decides for every rank)."""
        max_steps, max_s = self.tcfg.max_steps, self.tcfg.max_minutes * 60.0
        if max_steps and self.st["step"] >= max_steps:
            self.st["stop_reason"] = "max_steps"
            return True
        hit = bool(max_s and time.perf_counter() - self.t_start > max_s)
        if max_s and self.dist.enabled:
            hit = distributed.broadcast_flag(hit, self.dist)
        if hit:
            self.st["stop_reason"] = "max_minutes"
        return hit

    def check_stop_requests(self) -> None:
        """After a SIGTERM or SIGINT: save ``last.pt`` and stop with :class:`TrainingStopped` (exit 128 + signal)."""
        if self.stops.received:
            self.st["stop_reason"] = "interrupted"  # not in FINISHED: --resume trains on
            self.save(self.last_path)
            raise TrainingStopped(self.stops.received[0], int(self.st["step"]), str(self.last_path))

    # ----------------------------------------------------------------------- validation and checkpoints
    def evaluate(self) -> bool:
        """Validate, log, checkpoint; True when early stopping (or the target) says stop. Only rank 0
        validates; its decision is broadcast."""
        tr = self.train_metrics()
        stop = False
        step = self.st["last_eval_step"] = int(self.st["step"])
        if self.dist.is_main:
            val = self.validate()
            self.log.scalars(tr, step, "train")
            self.log.scalars(val, step, "val")
            self.check_monitor(val)
            improved, stop = self.early_stopping(val)
            self.record(tr, val, improved)
        return distributed.broadcast_flag(stop, self.dist)

    def train_metrics(self) -> Metrics:
        """Mean training losses since the last validation (summed over ranks), speed and learning rate."""
        n = self.window_n
        if self.dist.enabled:
            red = distributed.all_reduce_sums({**self.sums, "_n": float(n)}, self.dist)
            n = int(red.pop("_n"))
            self.sums.update(red)
        tr = {k: v / max(n, 1) for k, v in self.sums.items()}
        tr["reactions_per_s"] = n / max(self.window_t, 1e-9)
        tr["lr"] = float(self.opt.param_groups[0]["lr"])
        self.sums.clear()
        self.window_n, self.window_t = 0, 0.0
        return tr

    def validate(self) -> Metrics:
        val = self.task.validate()
        if self.extra_val is not None:
            val.update(self.extra_val())
        self.model.train()
        return val

    def check_monitor(self, val: Metrics) -> None:
        """``train.monitor`` must be a validation metric; a model's default monitor that needs the injected
        validator falls back to the task's own metric (said once), anything else is refused in one line."""
        monitor = self.monitor
        if monitor.key(val) is not None or not val:
            return
        missing = [name for name in monitor.names if name not in val] or [monitor.spec]
        default = kind(self.cfg.model_name).train_defaults.get("monitor")
        fallback = self.task.fallback_monitor
        if not (fallback and monitor.spec == default):
            close = difflib.get_close_matches(missing[0], list(val), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise InputError(f"train.monitor: {missing[0]!r} is not a validation metric of this model; "
                             f"it reports {', '.join(sorted(val))}{hint}")  # fmt: skip
        print(f"[train] {monitor.spec!r} is not among the validation metrics ({', '.join(sorted(val))}; "
              f"the GNN's EM needs the line validator): early stopping on {fallback!r}", file=sys.stderr)  # fmt: skip
        self.monitor = Monitor(fallback)

    def early_stopping(self, val: Metrics) -> tuple[bool, bool]:
        """(improved, stop): a new best on the monitor resets the patience; a validation without improvement
        spends it; reaching ``train.target`` stops too."""
        st, step = self.st, int(self.st["step"])
        key = self.monitor.key(val)
        improved = key is not None and (st["best_key"] is None or key > tuple(st["best_key"]))
        if improved:
            st["best_key"], st["best_step"], st["bad_evals"] = list(key), step, 0
            st["best_metrics"] = {"epoch": self.epoch_trained(), "step": step, **val}
        elif val:  # no validation data (no metrics) is no evidence against the run: never stops it
            st["bad_evals"] += 1
        stop = still_stopped(st, self.tcfg)
        if stop:
            st["stop_reason"] = "early_stopping"
        value = self.monitor.value(val)
        if self.tcfg.target and value is not None and value >= self.tcfg.target:
            stop, st["stop_reason"] = True, "target"
        return improved, stop

    def record(self, tr: Metrics, val: Metrics, improved: bool) -> None:
        """History entry, ``best.pt`` on an improvement, ``last.pt`` always, the progress bar's figures."""
        rec = {"epoch": self.epoch_trained(), "step": int(self.st["step"]), "train": tr, "val": val,
               "elapsed_s": time.perf_counter() - self.t_start}  # fmt: skip
        self.history.append(rec)
        self.st["last"] = rec
        if improved:
            self.save(self.best_path)
        self.save(self.last_path)
        figures = {k: round(v, 3) for k, v in val.items() if isinstance(v, float)}
        if self.bar is not None:
            self.bar.set_postfix(figures)
        elif self.tcfg.progress:  # no terminal (output sent to a file): one line per validation instead of a bar
            total = f"/{self.total_steps}" if self.total_steps else ""
            shown = " ".join(f"{k}={v}" for k, v in figures.items())
            mark = " (best)" if improved else ""
            print(f"[train] step {rec['step']}{total} epoch {rec['epoch']}: {shown}{mark}", file=sys.stderr, flush=True)

    def epoch_trained(self) -> int:
        """The last epoch trained, in part or whole."""
        return int(self.st["epoch"]) - (0 if self.st["batch_in_epoch"] else 1)

    def save(self, path: Path) -> None:
        """A checkpoint: weights, optimiser, RNG states, the state, the config and the task's entries."""
        st = self.st
        plain, tensors = rng_state(self.gen)
        tensors["rng_loader"] = self.loader_state if st["batch_in_epoch"] else self.gen.get_state()
        entries = self.task.checkpoint_entries()
        meta = {
            "model": self.cfg.model_name,
            **entries.pop("meta", {}),
            "best_metrics": st["best_metrics"],
            "engine": dict(st),
            "rng": plain,
        }
        state = {
            "model": self.model.state_dict(),
            "optimizer": self.opt.state_dict(),
            "epoch": self.epoch_trained(),
            "step": int(st["step"]),
            **tensors,
            "config": self.cfg.to_dict(),
            "versions": versions(),
            "meta": meta,
            **entries,
        }
        save_checkpoint(path, state)

    # ----------------------------------------------------------------------- the end
    def close(self) -> None:
        self.stops.restore()
        if self.bar is not None:
            self.bar.close()
        self.log.close()
        distributed.barrier(self.dist)
        distributed.shutdown()

    def summary(self) -> dict[str, Any]:
        """The run's summary (also ``summary.json``, written by rank 0)."""
        st, tcfg, monitor = self.st, self.tcfg, self.monitor
        secs = max(float(st["train_seconds"]), 1e-9)
        result: dict[str, Any] = {
            "model": self.cfg.model_name,
            "run_dir": str(self.run_dir),
            "device": str(self.device),
            "world_size": self.dist.world_size,
            "resumed": self.ck is not None,
            "steps": int(st["step"]),
            "step": int(st["step"]),
            "epoch": int(st["epoch"]),
            "stop_reason": st["stop_reason"],
            "out_of_budget": st["stop_reason"] in ("max_steps", "max_minutes"),
            "monitor": monitor.spec,
            "best": st["best_metrics"],
            "best_step": st["best_step"],
            "best_value": monitor.value(st["best_metrics"]),
            "best_eval": st["best_metrics"],
            "last_eval": (st.get("last") or {}).get("val", {}),
            "batch_size": tcfg.batch_size,
            "n_params": sum(p.numel() for p in self.model.parameters()),  # a shared tensor counts once
            "build_s": self.build_s,
            "train_s": time.perf_counter() - self.t_start,
            "train_seconds": secs,
            "train_reactions_per_s": st["train_reactions"] / secs,
            "history": self.history,
            "last": str(self.last_path),
        }
        result.update(self.task.summary(result))
        result["train_lines"] = result.get("n_train")
        if self.dist.is_main:
            atomic_write_text(self.run_dir / "summary.json", json.dumps(result, indent=2, default=str) + "\n")
        return result


def _changed_keys(saved: dict[str, Any], now: dict[str, Any], sections: tuple[str, ...]) -> list[str]:
    """The ``section.key`` settings whose value differs between a checkpoint's saved config and the current one."""
    out = []
    for sec in sections:
        a, b = saved.get(sec) or {}, now.get(sec) or {}
        if isinstance(a, dict) and isinstance(b, dict):
            out += [f"{sec}.{k}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    return out
