"""YAML configs with ``--set key.sub=value`` overrides (values parsed as YAML scalars)."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from .errors import InputError


def load_config(path: str | Path, overrides: Iterable[str] = ()) -> dict[str, Any]:
    path = Path(path)
    try:
        cfg = yaml.safe_load(path.read_text()) or {}
    except FileNotFoundError:
        raise InputError("config file not found", path=str(path)) from None
    except yaml.YAMLError as err:
        raise InputError(f"invalid YAML: {err}", path=str(path)) from None
    if not isinstance(cfg, dict):
        raise InputError("config must be a mapping at top level", path=str(path))
    return apply_overrides(cfg, overrides)


def apply_overrides(cfg: dict[str, Any], overrides: Iterable[str]) -> dict[str, Any]:
    """Return a copy of ``cfg`` with each ``a.b.c=value`` applied (creating missing levels)."""
    out = copy.deepcopy(cfg)
    for item in overrides:
        if "=" not in item:
            raise InputError(f"override {item!r} must look like key.sub=value")
        key, raw = item.split("=", 1)
        parts = key.strip().split(".")
        if not all(parts):
            raise InputError(f"override {item!r} has an empty key part")
        node = out
        for p in parts[:-1]:
            nxt = node.get(p)
            if nxt is None:
                nxt = node[p] = {}
            if not isinstance(nxt, dict):
                raise InputError(f"override {item!r}: {p!r} is not a mapping")
            node = nxt
        node[parts[-1]] = yaml.safe_load(raw) if raw != "" else ""
    return out
