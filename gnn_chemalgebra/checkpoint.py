"""Checkpoints written atomically and loaded without executing pickled code (``weights_only=True``)."""

from __future__ import annotations

import io
import json
import warnings
from collections.abc import Sequence
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


def versions() -> dict[str, str]:
    """Versions of the package and of the libraries that shape a model's numbers (saved with checkpoints)."""
    import platform
    from importlib import metadata

    from .version import __version__

    out = {"gnn_chemalgebra": str(__version__), "torch": torch.__version__, "python": platform.python_version()}
    for dist in ("torch_geometric", "rdkit"):  # read from metadata: importing PyG just for this is slow
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "absent"
    out["platform"] = platform.platform()
    return out


def load_checkpoint(
    path: str | Path,
    map_location: str | torch.device = "cpu",
    *,
    require: Sequence[str] = ("model",),
    kind: str = "gnn-chemalgebra",
) -> dict[str, Any]:
    """Entries of a checkpoint written by :func:`save_checkpoint`; JSON entries decoded.

    Every failure (missing, a folder, empty, text or foreign file, truncated archive, pickled Python objects
    that a safe load refuses, an entry of ``require`` missing) is one :class:`InputError` line naming the file;
    ``kind`` names the expected checkpoint in that line.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("checkpoint not found", path=str(path))
    if path.is_dir():
        raise InputError("is a folder, not a checkpoint file", path=str(path))
    try:
        with warnings.catch_warnings():  # torch warns about pickle protocols before failing
            warnings.simplefilter("ignore")
            raw = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:  # corrupt or foreign file: torch's message spans several lines
        raise InputError(_load_failure(path, err), path=str(path)) from None
    if not isinstance(raw, dict):
        raise InputError(
            f"not a gnn-chemalgebra checkpoint: the file holds a {type(raw).__name__}, not a dict of entries",
            path=str(path),
        )
    out: dict[str, Any] = {}
    for k, v in raw.items():
        if isinstance(k, str) and k.endswith("_json"):
            try:
                out[k[: -len("_json")]] = json.loads(v)
            except (TypeError, ValueError):
                raise InputError(f"corrupt checkpoint: entry {k!r} is not JSON text", path=str(path)) from None
        else:
            out[k] = v
    missing = [k for k in require if k not in out]
    if missing:
        found = ", ".join(sorted(str(k) for k in out)[:8]) or "nothing"
        raise InputError(
            f"not a {kind} checkpoint: missing {', '.join(map(repr, missing))} (it has: {found})",
            path=str(path),
        )
    return out


def _load_failure(path: Path, err: Exception) -> str:
    """One line saying why ``torch.load`` refused the file, from its first bytes (torch's text is multi-line)."""
    if isinstance(err, PermissionError):
        return "permission denied"
    if isinstance(err, OSError) and not isinstance(err, EOFError):
        return f"cannot read the file ({err.strerror or type(err).__name__})"
    try:
        with open(path, "rb") as fh:
            head = fh.read(512)
    except OSError as exc:
        return f"cannot read the file ({exc.strerror})"
    if not head:
        return "empty file, not a PyTorch checkpoint"
    refused = "Weights only load failed" in str(err)
    if head.startswith(b"PK\x03\x04") or head.startswith(b"\x80"):
        if refused:
            return "not a gnn-chemalgebra checkpoint: it holds Python objects that a safe load (weights_only) refuses"
        return "corrupt or truncated PyTorch checkpoint (the archive cannot be read)"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return "not a PyTorch checkpoint (unknown binary format)"
    return "not a PyTorch checkpoint (a text file)"
