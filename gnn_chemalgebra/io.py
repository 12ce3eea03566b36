"""Atomic file writes and hashing: a file is either the old one or the complete new one, never truncated."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# Fault injection for the kill-and-resume tests: pause (seconds) after the temp file is complete and before the
# rename, so a test can SIGKILL a process in the middle of a checkpoint write. Unset in normal use.
_PAUSE_ENV = "GNNCA_FAULT_PAUSE_BEFORE_RENAME"


def current_umask() -> int:
    """The process umask (read by setting it and putting it back: the OS has no plain getter)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def cannot_write_in(folder: str | Path) -> str | None:
    """Why no file can be written in ``folder`` (a read-only folder or file system), else ``None``: found by
    writing and removing a temporary file there, so a command checks its output folder before its work."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".gnnca-probe.", dir=folder)
    except OSError as err:
        return err.strerror or type(err).__name__
    os.close(fd)
    os.unlink(tmp)
    return None


def _atomic(path: Path, write) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())  # mkstemp makes 0600; the file gets the user's usual mode
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        if os.environ.get(_PAUSE_ENV):
            time.sleep(float(os.environ[_PAUSE_ENV]))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    _atomic(Path(path), lambda fh: fh.write(data))


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_lines(path: str | Path, lines: Iterable[str]) -> int:
    """Write one line per item (newline-terminated); returns the number of lines."""
    n = 0

    def write(fh) -> None:
        nonlocal n
        for line in lines:
            fh.write(line.encode("utf-8") + b"\n")
            n += 1

    _atomic(Path(path), write)
    return n


def atomic_write_json(path: str | Path, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def read_lines(path: str | Path) -> list[str]:
    """Lines of a text file without their newline (a missing final newline is fine)."""
    with open(path, encoding="utf-8") as fh:
        return fh.read().splitlines()


def checkpoint_paths(spec: str | Path) -> list[str]:
    """The checkpoint files a ``--checkpoint`` value names: one path, or several joined by commas (an ensemble)."""
    return [p for p in str(spec).split(",") if p] or [str(spec)]
