"""Device selection and mixed precision that degrade gracefully to CPU."""

from __future__ import annotations

import contextlib
import os
import random
import re

import numpy as np
import torch


def select_device(requested: str = "auto") -> torch.device:
    """``auto`` picks CUDA when present (the local rank's GPU under torchrun), else CPU. Anything else must be
    ``cpu``, ``cuda`` or ``cuda:N`` of a GPU that exists: a typo or a missing GPU is one :class:`InputError`
    line, before any model is loaded."""
    from .errors import InputError

    if requested == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
        return torch.device("cpu")
    text = str(requested).strip()
    if not re.fullmatch(r"cpu|cuda(:\d+)?", text):
        raise InputError(f"unknown device {_cut(text)!r}: use cpu, cuda, cuda:N or auto")
    device = torch.device(text)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            use = "--device cpu, or --set train.device=cpu for gnnca train"
            raise InputError(f"device {text!r}: CUDA is not available on this machine (use cpu: {use})")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise InputError(f"device {text!r}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    return device


def _cut(text: str, keep: int = 40) -> str:
    return text if len(text) <= keep else text[:keep] + "..."


def autocast(device: torch.device, enabled: bool = True):
    """bf16 autocast on CUDA; a no-op context on CPU (CPU runs stay in fp32 and bit-reproducible)."""
    if enabled and device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
