"""Run logging: TensorBoard scalars, a ``metrics.jsonl`` file, and tqdm progress bars."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm


class RunLogger:
    def __init__(self, run_dir: str | Path, tensorboard: bool = True, purge_step: int | None = None) -> None:
        """``purge_step``: on resume, TensorBoard drops what a killed run logged after its last checkpoint."""
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.writer = None
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(str(self.run_dir / "tb"), purge_step=purge_step)
        self._jsonl = open(self.run_dir / "metrics.jsonl", "a", encoding="utf-8")

    def scalars(self, values: dict[str, Any], step: int, prefix: str = "") -> None:
        rec = {"step": step}
        for k, v in values.items():
            if isinstance(v, (int, float)):
                tag = f"{prefix}/{k}" if prefix else k
                rec[tag] = float(v)
                if self.writer is not None:
                    self.writer.add_scalar(tag, float(v), step)
        self._jsonl.write(json.dumps(rec) + "\n")
        self._jsonl.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.flush()
            self.writer.close()
        self._jsonl.close()


class NullLogger:
    """What ranks other than 0 log to: nothing (only rank 0 writes files)."""

    def scalars(self, values: dict[str, Any], step: int, prefix: str = "") -> None:
        return None

    def close(self) -> None:
        return None


def progress(it: Iterable, desc: str, enabled: bool = True, total: int | None = None) -> Iterable:
    return tqdm(it, desc=desc, total=total, disable=not enabled or not sys.stderr.isatty(), leave=False)


def progress_bar(total: int | None, initial: int, desc: str, enabled: bool = True) -> tqdm | None:
    """A bar of optimiser steps on stderr (None when off or when stderr is not a terminal)."""
    if not enabled or not sys.stderr.isatty():
        return None
    return tqdm(total=total, initial=initial, desc=desc, unit="step", dynamic_ncols=True, leave=False)
