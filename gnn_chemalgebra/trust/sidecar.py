"""The calibration sidecars beside a checkpoint: ``<checkpoint>.trust.json`` (plain numbers, with a format
version) and ``<checkpoint>.trust.npz`` (the in-domain fingerprints; never pickle)."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..io import atomic_write_bytes, atomic_write_json, relist_checksums
from .features import ALT_FEATURES, FEATURES

# the sidecar format this version writes and the newest it reads; a file without the field is format 1.
# 2: a calibration model may name its calibrator (``"calibrator": "isotonic"``); format 1 models are all linear
FORMAT = 2


def sidecar_paths(checkpoint: str | Path) -> tuple[Path, Path]:
    """``<checkpoint>.trust.json`` and ``<checkpoint>.trust.npz``."""
    p = Path(checkpoint)
    return p.with_name(p.name + ".trust.json"), p.with_name(p.name + ".trust.npz")


def read_sidecar(js: Path) -> dict[str, Any]:
    """The JSON sidecar's contents; one line when it cannot be read or is of a format this version does not know."""
    try:
        d = json.loads(js.read_text())
    except (OSError, ValueError) as exc:
        raise InputError(f"unreadable calibration sidecar: {exc}", path=str(js)) from None
    if not isinstance(d, dict):
        raise InputError("calibration sidecar is not a JSON object", path=str(js))
    version = d.get("format", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputError(f"calibration sidecar format {version!r} is not a format version", path=str(js))
    if version > FORMAT:
        raise InputError(
            f"calibration sidecar format {version} is newer than this gnnca reads (up to {FORMAT}): upgrade "
            "gnn-chemalgebra or fit the calibration again",
            path=str(js),
        )
    return d


def fitted_for_these_features(d: Mapping[str, Any]) -> bool:
    """Whether a sidecar's calibration reads the features this version computes (else it is not used: the lines
    are uncalibrated until it is fitted again)."""
    cal = d.get("calibrator") or {}
    return not cal or (cal.get("features") == list(FEATURES) and cal.get("alt_features") == list(ALT_FEATURES))


def load_fingerprints(npz: Path) -> np.ndarray:
    with np.load(npz, allow_pickle=False) as z:
        return z["fingerprints"]


def write_sidecars(
    checkpoint: str | Path, body: Mapping[str, Any], fingerprints: np.ndarray | None
) -> tuple[Path, Path | None]:
    """Write the sidecars beside ``checkpoint`` (atomically), the format version first, and re-list them in the
    folder's ``checksums.json`` when it has one (a shipped folder keeps a true list)."""
    js, npz = sidecar_paths(checkpoint)
    written: Path | None = None
    if fingerprints is not None:
        buf = io.BytesIO()
        np.savez_compressed(buf, fingerprints=fingerprints)
        atomic_write_bytes(npz, buf.getvalue())
        written = npz
    atomic_write_json(js, {"format": FORMAT, **body})
    relist_checksums(js, *([] if written is None else [written]))
    return js, written
