"""Checkpoints written atomically and loaded without executing pickled code (``weights_only=True``).

A checkpoint may store its larger weight matrices in half precision (:func:`compact_state`, marked in its meta);
:func:`load_checkpoint` casts them back to float32, so every caller sees full-precision tensors. A checkpoint
listed in a ``checksums.json`` beside it (the bundled models) is checked against its sha256 when loaded."""

from __future__ import annotations

import io
import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from .errors import InputError
from .io import atomic_write_bytes, verify_checksum

COMPACT = "compact"  # meta entry of a compact checkpoint: which tensors are stored in which dtype
HALF_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}


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
    check: bool = True,
) -> dict[str, Any]:
    """Entries of a checkpoint written by :func:`save_checkpoint`; JSON entries decoded.

    Every failure (missing, a folder, empty, text or foreign file, truncated archive, pickled Python objects
    that a safe load refuses, an entry of ``require`` missing) is one :class:`InputError` line naming the file;
    ``kind`` names the expected checkpoint in that line. ``check=False`` skips the ``checksums.json`` check (for
    the command that rewrites that list).
    """
    path = Path(path)
    if not path.exists():
        raise InputError("checkpoint not found", path=str(path))
    if path.is_dir():
        raise InputError("is a folder, not a checkpoint file", path=str(path))
    if check:
        verify_checksum(path)
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
    _restore_full_precision(out, path)
    missing = [k for k in require if k not in out]
    if missing:
        found = ", ".join(sorted(str(k) for k in out)[:8]) or "nothing"
        raise InputError(
            f"not a {kind} checkpoint: missing {', '.join(map(repr, missing))} (it has: {found})",
            path=str(path),
        )
    return out


def compact_state(ck: dict[str, Any], dtype: str = "float16", keep: Sequence[str] = ()) -> dict[str, Any]:
    """``ck`` (as :func:`load_checkpoint` returns it) for shipping: every floating weight matrix of ``ck['model']``
    (two or more dimensions, the bulk of the bytes) stored as ``dtype``, except the tensors named in ``keep``;
    biases, norms and buffers stay float32. The tensors cast are listed in ``meta['compact']``, which is how the
    loader knows to cast them back; optimiser, scheduler and RNG state are dropped."""
    if dtype not in HALF_DTYPES:
        raise InputError(f"compact dtype must be one of {', '.join(HALF_DTYPES)}, got {dtype!r}")
    model = dict(ck["model"])
    cast = [
        name
        for name, t in model.items()
        if isinstance(t, torch.Tensor) and t.dtype == torch.float32 and t.dim() >= 2 and name not in keep
    ]
    for name in cast:
        model[name] = model[name].to(HALF_DTYPES[dtype])
    meta = {k: v for k, v in (ck.get("meta") or {}).items() if k not in ("rng", COMPACT)}
    meta[COMPACT] = {"entry": "model", "dtype": dtype, "tensors": cast}
    drop = {"optimizer", "scheduler", "scaler", "rng", "model", "meta", COMPACT}
    return {**{k: v for k, v in ck.items() if k not in drop}, "model": model, "meta": meta}


def _restore_full_precision(out: dict[str, Any], path: Path) -> None:
    """Cast the tensors a compact checkpoint stores in half precision back to float32, in place; the marker moves
    from ``meta`` to ``out['compact']`` (the loaded state is full precision, and saving it again writes it so)."""
    meta = out.get("meta")
    info = meta.pop(COMPACT, None) if isinstance(meta, dict) else None
    if info is None:
        return
    state = out.get(info.get("entry", "model"))
    dtype = HALF_DTYPES.get(info.get("dtype"))
    if not isinstance(state, dict) or dtype is None:
        raise InputError("corrupt checkpoint: its compact marker names no weights or an unknown dtype", path=str(path))
    for name in info.get("tensors", []):
        t = state.get(name)
        if not isinstance(t, torch.Tensor) or t.dtype != dtype:
            raise InputError(
                f"corrupt checkpoint: compact tensor {name!r} is not stored as {info['dtype']}", path=str(path)
            )
        state[name] = t.float()
    out[COMPACT] = info


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
