"""What a training run carries across a stop and a resume besides weights: RNG states (saved with every
checkpoint), stop requests by signal (acted on between optimiser steps), and fine-tuning start weights."""

from __future__ import annotations

import random
import signal
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..checkpoint import load_checkpoint
from ..errors import InputError


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


# --------------------------------------------------------------------------- start weights
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
    grown = tuple(getattr(model, "grown_state_rows", ()))
    for k in [k for k in set(own) & set(state) if k.startswith(grown)]:
        old, new = state[k], own[k]
        if new.dim() and new.shape[1:] == old.shape[1:] and new.shape[0] > old.shape[0]:
            rows = new.clone()  # the new rows as built (a buffer: computed from the vocabulary; a weight: initialised)
            rows[: old.shape[0]] = old.to(rows.dtype)
            state = {**state, k: rows}
    unexpected = sorted(set(state) - set(own))
    shapes = sorted(k for k in set(own) & set(state) if tuple(own[k].shape) != tuple(state[k].shape))
    if missing or unexpected or shapes:
        groups = (("missing", missing), ("unexpected", unexpected), ("shape differs", shapes))
        parts = [f"{label}: {', '.join(keys[:3])}{' ...' if len(keys) > 3 else ''}" for label, keys in groups if keys]
        why = "; ".join(parts)
        raise InputError(f"train.init_from: checkpoint does not fit this model's architecture ({why})", path=str(path))
    model.load_state_dict(state, strict=not (fresh - set(state)))
