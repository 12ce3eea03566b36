"""Sidecars bound to the bytes of their checkpoint (sha256): a sidecar written for another file, or another
version of this one, is not used; a bundled sidecar whose bytes changed is refused."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Generic, TypeVar

from ..io import checkpoint_paths, file_stamp, sha256_cached, sha256_file, verify_checksum
from .sidecar import fitted_for_these_features, read_sidecar, sidecar_paths

T = TypeVar("T")


def binding_fields(checkpoint: str | Path) -> dict[str, Any]:
    """What a sidecar records of the checkpoint it belongs to: its file name and sha256."""
    return {"checkpoint": Path(checkpoint).name, "checkpoint_sha256": sha256_file(checkpoint)}


def bound_sidecar(checkpoint: str | Path, any_features: bool = False) -> tuple[dict[str, Any], Path | None] | None:
    """The JSON sidecar of ``checkpoint`` and its fingerprint file (``None`` when there is none) when they exist,
    were made for this very file (its sha256) and read today's features (``any_features``: or others, for a refit
    that keeps the in-domain index); else ``None``. An ensemble (``a.pt,b.pt``) has none: each calibration belongs
    to one model."""
    parts = checkpoint_paths(str(checkpoint))
    if len(parts) != 1:
        return None
    js, npz = sidecar_paths(parts[0])
    if not js.is_file() or not Path(parts[0]).is_file():
        return None
    for shipped in (js, npz):  # a bundled sidecar is listed in checksums.json: refused when its bytes changed
        if shipped.is_file():
            verify_checksum(shipped)
    d = read_sidecar(js)
    if not any_features and not fitted_for_these_features(d):
        return None  # written for other features: uncalibrated until fitted again
    want = d.get("checkpoint_sha256")
    if want and want != sha256_cached(parts[0]):
        return None  # written for another version of this file
    return d, npz if npz.is_file() else None


def bound_to_models(meta: dict[str, Any], edit_sha256: str | None, type1_sha256: str | None) -> bool:
    """Whether a calibration's recorded models are the ones decoding now: the edit model its SMILES product graphs
    came from (when it recorded one), and the Type-1 model that wrote its Type-1 lines (or none for both)."""
    want_edit = meta.get("edit_sha256")
    if want_edit is not None and want_edit != edit_sha256:
        return False
    return meta.get("type1_sha256") == type1_sha256


class StampedCache(Generic[T]):
    """Values read from files, kept per process and keyed by the files' stamps (path, size, modification time):
    a file rewritten in place is read again. Its owner creates one and clears it when it wants."""

    def __init__(self) -> None:
        self._values: dict[tuple, T] = {}

    def get(self, paths: Iterable[str | Path], load: Callable[[], T]) -> T:
        key = tuple(file_stamp(p) for p in paths)
        if key not in self._values:
            self._values[key] = load()
        return self._values[key]

    def clear(self) -> None:
        self._values.clear()
