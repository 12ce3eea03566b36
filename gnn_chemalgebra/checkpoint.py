"""Checkpoints written atomically and loaded without executing pickled code (``weights_only=True``)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import torch

from .errors import InputError
from .io import atomic_write_bytes


def save_checkpoint(path: str | Path, state: dict[str, Any]) -> None:
    """Save tensors and plain data. ``state['config']`` etc. are stored as JSON text to stay loader-safe."""
    safe = {}
    for k, v in state.items():
        if k in ("config", "featurizer", "versions", "meta", "extra"):
            safe[k + "_json"] = json.dumps(v)
        else:
            safe[k] = v
    buf = io.BytesIO()
    torch.save(safe, buf)
    path = Path(path)
    for stale in path.parent.glob(f".{path.name}.*.tmp"):  # left by a process killed mid-write
        stale.unlink(missing_ok=True)
    atomic_write_bytes(path, buf.getvalue())


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    path = Path(path)
    if not path.exists():
        raise InputError("checkpoint not found", path=str(path))
    try:
        raw = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:  # corrupt or foreign file
        raise InputError(f"cannot load checkpoint: {err}", path=str(path)) from None
    out: dict[str, Any] = {}
    for k, v in raw.items():
        if k.endswith("_json"):
            out[k[: -len("_json")]] = json.loads(v)
        else:
            out[k] = v
    return out
