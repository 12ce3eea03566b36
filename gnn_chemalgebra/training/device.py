"""Device selection and mixed precision that degrade gracefully to CPU."""

from __future__ import annotations

import contextlib
import os
import random

import numpy as np
import torch


def select_device(requested: str = "auto") -> torch.device:
    """``auto`` picks CUDA when present (the local rank's GPU under torchrun), else CPU."""
    if requested == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
        return torch.device("cpu")
    return torch.device(requested)


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
