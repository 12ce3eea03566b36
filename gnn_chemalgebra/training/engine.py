"""The one training engine behind ``gnnca train`` for the bag GNN, the bond-edit model and the Transformer.

A model contributes a small :class:`Task` (data, model, batches, loss, validation metrics); the engine owns
everything else: seeds and RNG state, device and data-parallel ranks, the optimiser and the learning-rate
schedule, the budgets (epochs, optimiser steps, wall clock), validation every ``train.eval_every`` steps or at
the end of each epoch, early stopping on ``train.monitor`` with a patience in validations or in optimiser steps,
atomic ``last.pt`` / ``best.pt`` checkpoints, exact resume (also from the middle of an epoch), TensorBoard and
``metrics.jsonl`` through :mod:`.logging`, a progress bar and ``summary.json``. SIGTERM or SIGINT (a scheduler's
preemption, a session's end, Ctrl-C) stops a single-process run after the optimiser step in progress with
``last.pt`` saved, so ``--resume`` loses nothing (a second SIGINT aborts at once).

Validation that needs a higher floor (the GNN's whole-line EM needs the predictor) is injected as
``validator``: a factory called with the built task that returns a callable giving more metrics.
"""

from __future__ import annotations

import difflib
import json
import math
import random
import signal
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..checkpoint import load_checkpoint, save_checkpoint, versions
from ..config import TRAIN_DEFAULTS_BY_MODEL, Config, TrainConfig
from ..errors import InputError, TrainingStopped
from ..io import atomic_write_text
from . import distributed
from .device import seed_everything, select_device
from .logging import NullLogger, RunLogger, progress_bar

Metrics = dict[str, float]
ValidatorFactory = Callable[["Task"], Callable[[], Metrics]]
FINISHED = ("early_stopping", "target")  # a run that stopped for these trains no further on --resume


class Task:
    """What one model brings to the engine. Subclasses set ``model`` (and ``net`` for DDP) in :meth:`build`."""

    name = "task"
    fallback_monitor = ""  # what to early-stop on when train.monitor is not among the validation metrics
    # Adam/AdamW's fused kernel (one pass over each tensor, no per-parameter Python loop) where torch has it for
    # the device; its rounding differs slightly from the loop's, so a task opts in. A checkpoint's own setting
    # (saved in its optimiser state) wins on resume, so runs resume as they were started.
    fused_optimizer = False
    model: torch.nn.Module
    net: torch.nn.Module | None = None  # the module to call in training (the DDP wrapper, else ``model``)

    def build(self, cfg: Config, device: torch.device, ck: dict[str, Any] | None, gen: torch.Generator,
              dist_info: distributed.DistInfo) -> None:  # fmt: skip
        """Load data and build the model (after seeding; ``ck`` is the checkpoint resumed from, if any)."""
        raise NotImplementedError

    def steps_per_epoch(self) -> int:
        raise NotImplementedError

    def train_batches(self, epoch: int) -> Iterable[Any]:
        """The batches of ``epoch`` in order; a pure function of (seed, epoch, loader generator state)."""
        raise NotImplementedError

    def train_step(self, batch: Any) -> tuple[dict[str, torch.Tensor], int]:
        """Forward and losses (``total`` is optimised) and the number of reactions in the batch."""
        raise NotImplementedError

    def validate(self) -> Metrics:
        return {}

    def checkpoint_entries(self) -> dict[str, Any]:
        """Plain data saved with every checkpoint: ``meta`` (hparams, vocabulary ...) and top-level extras."""
        return {"meta": {}}

    def summary(self, result: dict[str, Any]) -> dict[str, Any]:
        """Model-specific summary keys, added to the engine's."""
        return {}


# --------------------------------------------------------------------------- schedule
def lr_at(tcfg: TrainConfig, step: int, total: int, epoch: int, epochs: int) -> float:
    """Learning rate of optimiser step ``step`` (0-based) of ``total``; stateless, so a resume is exact.

    ``constant``: linear warm-up over ``warmup_steps`` (0 = none), then ``lr``. ``cosine``: linear warm-up
    (``warmup_steps``, else the share ``warmup`` of the budget), then cosine decay to 1% of ``lr``. ``noam``:
    warm-up then ``lr * sqrt(warmup / step)``. ``cosine_epochs``: cosine over epochs down to 10% of ``lr``.
    """
    base, s = tcfg.lr, step + 1
    if tcfg.lr_schedule == "cosine_epochs":
        return base * (0.1 + 0.45 * (1 + math.cos(math.pi * epoch / max(epochs, 1))))
    if tcfg.lr_schedule == "constant":
        w = tcfg.warmup_steps
        return base * s / w if w and s < w else base
    w = tcfg.warmup_steps or max(int(total * tcfg.warmup), 1)
    if tcfg.lr_schedule == "noam":
        return base * min(s / w, math.sqrt(w / s))
    if total <= 0:
        return base
    if step < w:
        return base * s / w
    frac = min((step - w) / max(total - w, 1), 1.0)
    return base * (0.01 + 0.99 * 0.5 * (1.0 + math.cos(math.pi * frac)))


# --------------------------------------------------------------------------- monitor
class Monitor:
    """Early-stopping metric: ``EM`` or a comma list compared in order (``val_em,val_token_acc``: EM, and token
    accuracy while EM ties, e.g. at 0). Lower is better for a name that contains ``loss``, higher for others."""

    def __init__(self, spec: str) -> None:
        self.names = [n.strip() for n in spec.split(",") if n.strip()]
        self.spec = ",".join(self.names)
        self.signs = [-1.0 if "loss" in n else 1.0 for n in self.names]

    def key(self, metrics: Metrics) -> tuple[float, ...] | None:
        if not self.names or any(n not in metrics for n in self.names):
            return None
        return tuple(sign * float(metrics[n]) for sign, n in zip(self.signs, self.names, strict=True))

    def value(self, metrics: Metrics) -> float | None:
        return float(metrics[self.names[0]]) if self.names and self.names[0] in metrics else None


# --------------------------------------------------------------------------- RNG state
def rng_state(gen: torch.Generator) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """Python/NumPy states as JSON-able lists and torch states as tensors (both ``weights_only``-safe)."""
    py = random.getstate()
    st = np.random.get_state()
    plain = {
        "python": [py[0], list(py[1]), py[2]],
        "numpy": [st[0], st[1].tolist(), int(st[2]), int(st[3]), float(st[4])],
    }
    tensors = {"rng_torch": torch.get_rng_state(), "rng_loader": gen.get_state()}
    if torch.cuda.is_available():
        tensors["rng_cuda"] = torch.stack(torch.cuda.get_rng_state_all())
    return plain, tensors


def restore_rng(plain: dict[str, Any], ck: dict[str, Any]) -> None:
    """Global RNGs as they were when ``ck`` was written (the loader generator is restored separately)."""
    v, st, g = plain["python"]
    random.setstate((v, tuple(st), g))
    name, keys, pos, has_g, cached = plain["numpy"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_g, cached))
    torch.set_rng_state(ck["rng_torch"].cpu())
    if torch.cuda.is_available() and "rng_cuda" in ck and len(ck["rng_cuda"]) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all([s.cpu() for s in ck["rng_cuda"]])


# --------------------------------------------------------------------------- stop requests
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class StopRequests:
    """Signals asking a run to stop, noted by handlers and acted on between optimiser steps.

    :meth:`install` sets handlers for :data:`STOP_SIGNALS` (only in the main thread, where Python allows it),
    :meth:`restore` puts the previous ones back. A second SIGINT restores the default handler and raises
    ``KeyboardInterrupt`` at once, for a user who will not wait for the step to finish."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: Any) -> None:
        if signum == signal.SIGINT and signal.SIGINT in self.received:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            raise KeyboardInterrupt
        self.received.append(signum)
        print(f"\n[train] {signal.Signals(signum).name}: stopping after this optimiser step (saving last.pt)",
              file=sys.stderr, flush=True)  # fmt: skip

    def install(self) -> None:
        for s in STOP_SIGNALS:
            try:
                self._previous[s] = signal.signal(s, self._handle)
            except ValueError:  # not the main thread: no handlers, the run stops as it always did
                break

    def restore(self) -> None:
        for s, handler in self._previous.items():
            signal.signal(s, handler)
        self._previous.clear()


# --------------------------------------------------------------------------- the loop
def init_weights(model: torch.nn.Module, path: str | Path) -> None:
    """Fine-tuning: load a checkpoint's weights into the freshly built ``model``. The architecture must match
    (hidden sizes, layers, vocabularies); a mismatch is one :class:`InputError` line naming the first tensors
    that differ, not a silent partial load."""
    state = load_checkpoint(path)["model"]
    own = model.state_dict()
    # parts a start model may lack, built to leave its function unchanged (the model names them; e.g. the bag GNN's
    # zero-initialised identity rows)
    fresh = {k for k in own if k.startswith(tuple(getattr(model, "fresh_state_prefixes", ())))}
    missing = sorted(set(own) - set(state) - fresh)
    unexpected = sorted(set(state) - set(own))
    shapes = sorted(k for k in set(own) & set(state) if tuple(own[k].shape) != tuple(state[k].shape))
    if missing or unexpected or shapes:
        groups = (("missing", missing), ("unexpected", unexpected), ("shape differs", shapes))
        parts = [f"{label}: {', '.join(keys[:3])}{' ...' if len(keys) > 3 else ''}" for label, keys in groups if keys]
        why = "; ".join(parts)
        raise InputError(f"train.init_from: checkpoint does not fit this model's architecture ({why})", path=str(path))
    model.load_state_dict(state, strict=not (fresh - set(state)))


def still_stopped(st: dict[str, Any], tcfg: Any) -> bool:
    """Do the patience settings stop the run in state ``st``? Asked after each validation, and again on
    ``--resume`` of an early-stopped run: a larger ``train.patience`` or ``train.patience_steps`` (or 0 = none)
    lets it train on from ``last.pt``."""
    if tcfg.patience_steps:
        return st["best_step"] is not None and int(st["step"]) - int(st["best_step"]) >= tcfg.patience_steps
    if tcfg.patience:
        return int(st["bad_evals"]) >= tcfg.patience
    return False


def fit(task: Task, cfg: Config, resume: bool = False, validator: ValidatorFactory | None = None) -> dict[str, Any]:
    """Train ``task`` as ``cfg`` says (or continue from ``<run_dir>/last.pt``); returns the run's summary."""
    tcfg = cfg.train
    if not (tcfg.epochs or tcfg.max_steps or tcfg.max_minutes):
        raise InputError("no budget: set train.epochs, train.max_steps or train.max_minutes")
    run_dir = Path(cfg.run_dir)
    if tcfg.num_threads:
        torch.set_num_threads(tcfg.num_threads)
    seed_everything(tcfg.seed)
    device = select_device(tcfg.device)
    dist_info = distributed.init(device)
    last_path, best_path = run_dir / "last.pt", run_dir / "best.pt"
    ck = load_checkpoint(last_path) if resume and last_path.exists() else None
    if ck is not None and "engine" not in (ck.get("meta") or {}):
        raise InputError("checkpoint written by an older trainer: resume needs a fresh run_dir", path=str(last_path))
    if resume and ck is None and dist_info.is_main:
        print(f"[train] no {last_path} yet: starting fresh", file=sys.stderr)

    t_build = time.perf_counter()
    gen = torch.Generator()
    gen.manual_seed(tcfg.seed)
    task.build(cfg, device, ck, gen, dist_info)
    build_s = time.perf_counter() - t_build
    model = task.model
    params = [p for p in model.parameters() if p.requires_grad]
    opt_cls = torch.optim.Adam if tcfg.optimizer == "adam" else torch.optim.AdamW
    fused = task.fused_optimizer and all(p.device.type in ("cpu", "cuda") and p.is_floating_point() for p in params)
    opt = opt_cls(params, lr=tcfg.lr, betas=tuple(tcfg.betas), weight_decay=tcfg.weight_decay,
                  **({"fused": True} if fused else {}))  # fmt: skip
    extra_val = validator(task) if validator is not None and dist_info.is_main else None
    monitor = Monitor(tcfg.monitor)

    st: dict[str, Any] = {  # the engine's resumable state (plain data)
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
    loader_state = gen.get_state()  # the loader generator at the start of the epoch in progress
    if ck is None and tcfg.init_from:
        init_weights(model, tcfg.init_from)
        if dist_info.is_main:
            print(f"[train] weights from {tcfg.init_from} (fresh optimiser and schedule)", file=sys.stderr)
    if ck is not None:
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optimizer"])
        st.update(ck["meta"]["engine"])
        loader_state = ck["rng_loader"]
    spe = max(task.steps_per_epoch(), 1)
    epochs, max_steps = tcfg.epochs, tcfg.max_steps
    total_steps = max_steps or epochs * spe
    max_s = tcfg.max_minutes * 60.0
    clip = tcfg.grad_clip
    log: RunLogger | NullLogger = NullLogger()
    if dist_info.is_main:
        log = RunLogger(run_dir, tensorboard=tcfg.tensorboard, purge_step=st["step"] + 1 if ck is not None else None)
    history: list[dict[str, Any]] = []
    sums: dict[str, float] = {}
    window = {"n": 0, "t": 0.0}
    t_start = time.perf_counter()
    bar = progress_bar(total_steps or None, st["step"], "train", tcfg.progress and dist_info.is_main)

    def epoch_trained() -> int:
        """The last epoch trained, in part or whole."""
        return int(st["epoch"]) - (0 if st["batch_in_epoch"] else 1)

    def save(path: Path) -> None:
        plain, tensors = rng_state(gen)
        tensors["rng_loader"] = loader_state if st["batch_in_epoch"] else gen.get_state()
        entries = task.checkpoint_entries()
        meta = {**entries.pop("meta", {}), "best_metrics": st["best_metrics"], "engine": dict(st), "rng": plain}
        state = {
            "model": model.state_dict(),
            "optimizer": opt.state_dict(),
            "epoch": epoch_trained(),
            "step": int(st["step"]),
            **tensors,
            "config": cfg.to_dict(),
            "versions": versions(),
            "meta": meta,
            **entries,
        }
        save_checkpoint(path, state)

    def evaluate() -> bool:
        """Validate, log, checkpoint; True when early stopping (or the target) says stop."""
        nonlocal monitor
        n = window["n"]
        if dist_info.enabled:
            red = distributed.all_reduce_sums({**sums, "_n": float(n)}, dist_info)
            n = int(red.pop("_n"))
            sums.update(red)
        tr = {k: v / max(n, 1) for k, v in sums.items()}
        tr["reactions_per_s"] = n / max(window["t"], 1e-9)
        tr["lr"] = float(opt.param_groups[0]["lr"])
        sums.clear()
        window.update(n=0, t=0.0)
        stop = False
        st["last_eval_step"] = int(st["step"])
        if dist_info.is_main:
            val = task.validate()
            if extra_val is not None:
                val.update(extra_val())
            model.train()
            step = int(st["step"])
            log.scalars(tr, step, "train")
            log.scalars(val, step, "val")
            if monitor.key(val) is None and val:
                missing = [name for name in monitor.names if name not in val] or [monitor.spec]
                default = TRAIN_DEFAULTS_BY_MODEL.get(cfg.model_name, {}).get("monitor")
                if not (task.fallback_monitor and monitor.spec == default):
                    close = difflib.get_close_matches(missing[0], list(val), n=1)
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                    raise InputError(f"train.monitor: {missing[0]!r} is not a validation metric of this model; "
                                     f"it reports {', '.join(sorted(val))}{hint}")  # fmt: skip
                print(f"[train] {monitor.spec!r} is not among the validation metrics ({', '.join(sorted(val))}; "
                      f"the GNN's EM needs the line validator): early stopping on {task.fallback_monitor!r}",
                      file=sys.stderr)  # fmt: skip
                monitor = Monitor(task.fallback_monitor)
            key = monitor.key(val)
            improved = key is not None and (st["best_key"] is None or key > tuple(st["best_key"]))
            if improved:
                st["best_key"], st["best_step"], st["bad_evals"] = list(key), step, 0
                st["best_metrics"] = {"epoch": epoch_trained(), "step": step, **val}
            elif val:  # no validation data (no metrics) is no evidence against the run: never stops it
                st["bad_evals"] += 1
            stop = still_stopped(st, tcfg)
            if stop:
                st["stop_reason"] = "early_stopping"
            value = monitor.value(val)
            if tcfg.target and value is not None and value >= tcfg.target:
                stop, st["stop_reason"] = True, "target"
            rec = {"epoch": epoch_trained(), "step": step, "train": tr, "val": val,
                   "elapsed_s": time.perf_counter() - t_start}  # fmt: skip
            history.append(rec)
            st["last"] = rec
            if improved:
                save(best_path)
            save(last_path)
            if bar is not None:
                bar.set_postfix({k: round(v, 3) for k, v in val.items() if isinstance(v, float)})
        return distributed.broadcast_flag(stop, dist_info)

    finished = st["stop_reason"] in FINISHED
    if finished and st["stop_reason"] == "early_stopping" and not still_stopped(st, tcfg):
        print(f"[train] resuming a run that stopped early at step {st['step']}: train.patience / "
              "train.patience_steps no longer stop it", file=sys.stderr)  # fmt: skip
        finished, st["stop_reason"] = False, ""
    if ck is not None:
        gen.set_state(loader_state)
        restore_rng(ck["meta"]["rng"], ck)
    model.train()
    net_step = task.train_step

    def budget_hit() -> bool:
        """Step or wall-clock budget spent (rank 0's clock decides for every rank)."""
        if max_steps and st["step"] >= max_steps:
            st["stop_reason"] = "max_steps"
            return True
        hit = bool(max_s and time.perf_counter() - t_start > max_s)
        if max_s and dist_info.enabled:
            hit = distributed.broadcast_flag(hit, dist_info)
        if hit:
            st["stop_reason"] = "max_minutes"
        return hit

    # data-parallel ranks would need to agree on the step to stop at: there the signals keep their default action
    stops = StopRequests()
    try:
        if not dist_info.enabled:
            stops.install()
        while not finished:
            if epochs and st["epoch"] >= epochs:
                st["stop_reason"] = "epochs"
                break
            if budget_hit():
                break
            skip = int(st["batch_in_epoch"])
            if skip:  # resume inside an epoch: replay its order from the saved loader state, skip what was trained
                gen.set_state(loader_state)
                rng_now = torch.get_rng_state()
            else:
                loader_state = gen.get_state()
            stop = False
            for i, batch in enumerate(task.train_batches(int(st["epoch"]))):
                if i < skip:
                    if i == skip - 1:
                        torch.set_rng_state(rng_now)  # skipped batches leave the RNG as the checkpoint had it
                    continue
                if budget_hit():
                    stop = True
                    break
                t0 = time.perf_counter()
                for g in opt.param_groups:
                    g["lr"] = lr_at(tcfg, int(st["step"]), total_steps, int(st["epoch"]), epochs)
                losses, n = net_step(batch)
                opt.zero_grad(set_to_none=True)
                losses["total"].backward()
                if clip > 0:
                    torch.nn.utils.clip_grad_norm_(params, clip)
                opt.step()
                st["step"] += 1
                st["batch_in_epoch"] = i + 1
                window["n"] += n
                st["train_reactions"] += n
                for k, v in losses.items():
                    sums[k] = sums.get(k, 0.0) + float(v.detach()) * n
                dt = time.perf_counter() - t0
                window["t"] += dt
                st["train_seconds"] += dt
                if bar is not None:
                    bar.update(1)
                if tcfg.eval_every and st["step"] % tcfg.eval_every == 0 and evaluate():
                    stop = finished = True
                    break
                if stops.received:
                    st["stop_reason"] = "interrupted"  # not in FINISHED: --resume trains on
                    save(last_path)
                    raise TrainingStopped(stops.received[0], int(st["step"]), str(last_path))
            else:
                st["epoch"] += 1
                st["batch_in_epoch"] = 0
                loader_state = gen.get_state()
                if not tcfg.eval_every and evaluate():
                    finished = True
                continue
            if stop:
                break
        if st["last_eval_step"] != st["step"] and not finished:
            evaluate()  # the final weights are always validated and saved
    finally:
        stops.restore()
        if bar is not None:
            bar.close()
        log.close()
        distributed.barrier(dist_info)
        distributed.shutdown()

    secs = max(float(st["train_seconds"]), 1e-9)
    result: dict[str, Any] = {
        "model": cfg.model_name,
        "run_dir": str(run_dir),
        "device": str(device),
        "world_size": dist_info.world_size,
        "resumed": ck is not None,
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
        "n_params": sum(p.numel() for p in model.parameters()),  # parameters() yields a shared tensor once
        "build_s": build_s,
        "train_s": time.perf_counter() - t_start,
        "train_seconds": secs,
        "train_reactions_per_s": st["train_reactions"] / secs,
        "history": history,
        "last": str(last_path),
    }
    result.update(task.summary(result))
    result["train_lines"] = result.get("n_train")
    if dist_info.is_main:
        atomic_write_text(run_dir / "summary.json", json.dumps(result, indent=2, default=str) + "\n")
    return result
