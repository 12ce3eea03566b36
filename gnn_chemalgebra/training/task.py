"""What one model brings to the training engine: a :class:`Task` (data, model, batches, loss, validation metrics),
and the validator factory a higher floor may inject (see :mod:`.engine`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch

from ..config import Config
from . import distributed

Metrics = dict[str, float]
ValidatorFactory = Callable[["Task"], Callable[[], Metrics]]


class Task:
    """What one model brings to the engine. Subclasses set ``model`` (and ``net`` for DDP) in :meth:`build`."""

    name = "task"
    fallback_monitor = ""  # what to early-stop on when train.monitor is not among the validation metrics
    # Adam/AdamW's fused kernel (one pass over each tensor, no per-parameter Python loop) where torch has it for
    # the device; its rounding differs slightly from the loop's, so a task opts in. A checkpoint's own setting
    # (saved in its optimiser state) wins on resume, so runs resume as they were started.
    fused_optimizer = False
    takes_validator = False  # validated further by the injected validator (the GNN: whole lines, predictor)
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
