"""When to step and when to stop: the learning-rate schedules, the early-stopping metric and the patience test,
all stateless functions of the run's state so that a resume is exact."""

from __future__ import annotations

import math
from typing import Any

from ..config import TrainConfig
from .task import Metrics


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


def still_stopped(st: dict[str, Any], tcfg: Any) -> bool:
    """Do the patience settings stop the run in state ``st``? Asked after each validation, and again on
    ``--resume`` of an early-stopped run: a larger ``train.patience`` or ``train.patience_steps`` (or 0 = none)
    lets it train on from ``last.pt``."""
    if tcfg.patience_steps:
        return st["best_step"] is not None and int(st["step"]) - int(st["best_step"]) >= tcfg.patience_steps
    if tcfg.patience:
        return int(st["bad_evals"]) >= tcfg.patience
    return False
