"""Checks of the arguments several ``gnnca data`` commands share: the worker count, a folder written to, and the
chemist's-convention folder, which must stay outside the benchmark build."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError


def worker_count(workers: int) -> int:
    """``--workers``: 0 is every core."""
    return workers or os.cpu_count() or 1


def refuse_file_as_out(out: Path) -> None:
    """``--out`` names a folder (or none yet), never a file."""
    if out.exists() and not out.is_dir():
        raise InputError("--out is a file, not a folder", path=str(out))


def check_chemist_folder(chemist: Path, built: Path) -> None:
    """The chemist's-convention folder: a folder (or none yet) outside the benchmark build, else refused."""
    if chemist.exists() and not chemist.is_dir():
        raise InputError("is a file, not a folder", path=str(chemist))
    c, b = chemist.resolve(), built.resolve()
    if c == b or b in c.parents:
        raise InputError("the chemist's-convention folder must be outside the benchmark folder", path=str(chemist))
