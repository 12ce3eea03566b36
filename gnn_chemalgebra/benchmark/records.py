"""The results format: one JSON record per (model, variant, setting, training data), merged and saved atomically.

Every record has ``model``, ``variant`` (short name, ``F_T1_x1``) and ``setting`` (``test_in`` ...); scored
records add ``EM``, ``JAC``, ``F1``, ``mol_JAC``, ``mol_F1`` (paper mode, %), ``n`` (lines scored) and
``command`` (what produced them). Optional fields, read where present:

- ``training_data``: ``local`` (the default when absent) or e.g. ``local+extra``; part of the record's key, so
  rows trained on more data sit beside the local-protocol rows instead of replacing them;
- ``fallback``: lines where no hypothesis balanced and the predictor wrote its fallback;
- GNN: ``EM_strict``, ``train_task``, ``train_steps``, ``train_s``, ``val_best``, ``n_params``,
  ``main_top1`` / ``main_top5``;
- Transformer: ``steps``, ``best_step``, ``train_lines``, ``batch_size``, ``tokenizer``, ``train_s`` (wall
  seconds), ``beam``, ``VAL``, ``BAL``, ``malformed_predictions``, decoding speed, ``task``, ``train``;
- ceilings (``oracle`` / ``bayes_ceiling``): ``EM_realised``, ``n_errors``, ``EM_first_n`` (the ceiling of the
  first n lines, for rows scored on a prefix).

A run folder's ``DONE`` marker (JSON: the training summary) says its training finished; a stage skips a record
already in its results file when resuming.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import atomic_write_json

METRICS: tuple[str, ...] = ("EM", "JAC", "F1", "mol_JAC", "mol_F1")
CEILING_MODELS: tuple[str, ...] = ("oracle", "bayes_ceiling")
REQUIRED: tuple[str, ...] = ("model", "variant", "setting")
LOCAL = "local"
MARKER = "DONE"

Record = dict[str, Any]
Key = tuple[str, str, str, str]


def record_key(rec: Record) -> Key:
    """What makes two records the same row: a re-run replaces it, other training data sits beside it."""
    return (rec["model"], rec["variant"], rec["setting"], rec.get("training_data") or LOCAL)


def validate(rec: Any, where: str) -> Record:
    """A record must be an object with string ``model``, ``variant`` and ``setting``."""
    if not isinstance(rec, dict):
        raise InputError(f"a record must be a JSON object, got {type(rec).__name__}", path=where)
    for field in REQUIRED:
        if not isinstance(rec.get(field), str):
            raise InputError(f"record without a string {field!r}: {json.dumps(rec)[:120]}", path=where)
    return rec


def load_records(path: str | Path) -> list[Record]:
    """Records of a results file (a list, or an object with ``records``); a missing file has none."""
    path = Path(path)
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise InputError(f"not JSON ({err.msg} at line {err.lineno})", path=str(path)) from None
    if isinstance(data, dict):
        data = data.get("records", [])
    if not isinstance(data, list):
        raise InputError("expected a list of records", path=str(path))
    return [validate(r, str(path)) for r in data]


def merge_records(old: Iterable[Record], new: Iterable[Record]) -> list[Record]:
    """``old`` with each record of ``new`` replacing the one with its key in place (appended when new)."""
    merged: dict[Key, Record] = {}
    for rec in [*old, *new]:
        merged[record_key(rec)] = rec
    return list(merged.values())


def save_records(path: str | Path, records: Sequence[Record]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, list(records))


def update_records(path: str | Path, new: Iterable[Record]) -> list[Record]:
    """Merge ``new`` into the results file and save it at once, so an interrupted stage keeps what it finished.

    The read-merge-write holds an exclusive lock on a sidecar file: two bench runs (one per core) that finish
    together must not drop each other's records."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        merged = merge_records(load_records(path), new)
        save_records(path, merged)
    return merged


def index(records: Iterable[Record], training_data: str = LOCAL) -> dict[tuple[str, str, str], Record]:
    """``(model, variant, setting) -> record`` over the records of one training-data label."""
    return {
        (r["model"], r["variant"], r["setting"]): r
        for r in records
        if (r.get("training_data") or LOCAL) == training_data
    }


def has_all(records: Iterable[Record], keys: Iterable[Key]) -> bool:
    have = {record_key(r) for r in records}
    return all(k in have for k in keys)


def read_marker(run_dir: str | Path) -> dict[str, Any] | None:
    """The finished-training summary of a run folder, or ``None`` while it is not finished."""
    marker = Path(run_dir) / MARKER
    if not marker.exists():
        return None
    try:
        return json.loads(marker.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise InputError(
            f"corrupt run marker ({err.msg}); delete it to train the run again", path=str(marker)
        ) from None


def write_marker(run_dir: str | Path, summary: dict[str, Any]) -> None:
    """Mark a run folder finished; ``history`` (per-epoch curves) stays in the run's own summary."""
    Path(run_dir).mkdir(parents=True, exist_ok=True)
    atomic_write_json(Path(run_dir) / MARKER, {k: v for k, v in summary.items() if k != "history"})
