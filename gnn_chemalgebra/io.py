"""Atomic file writes and hashing: a file is either the old one or the complete new one, never truncated; the
sha256 list of a folder of shipped files (checksums.json) written and checked."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from .errors import InputError

# Fault injection for the kill-and-resume tests: pause (seconds) after the temp file is complete and before the
# rename, so a test can SIGKILL a process in the middle of a checkpoint write. Unset in normal use.
_PAUSE_ENV = "GNNCA_FAULT_PAUSE_BEFORE_RENAME"
CHECKSUMS = "checksums.json"  # sha256 of the files of a folder of shipped checkpoints


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


def file_stamp(path: str | Path) -> tuple[str, int, int]:
    """A file as (resolved path, size, modification time): what hash caches are keyed by, so a file rewritten in
    place is read again ((path, -1, -1) when it cannot be read)."""
    p = Path(path).resolve()
    try:
        st = p.stat()
    except OSError:
        return str(p), -1, -1
    return str(p), st.st_size, st.st_mtime_ns


@lru_cache(maxsize=32)
def _sha256_stamped(path: str, size: int, mtime: int) -> str:
    return sha256_file(path)


def sha256_cached(path: str | Path) -> str:
    """:func:`sha256_file`, computed once per process for a file unchanged since (same size and mtime)."""
    return _sha256_stamped(*file_stamp(path))


def write_checksums(folder: str | Path, names: Sequence[str]) -> Path:
    """Write ``folder/checksums.json``: the sha256 and size of each named file, sorted (what
    :func:`verify_checksum` reads)."""
    folder = Path(folder)
    files = {n: {"sha256": sha256_cached(folder / n), "bytes": (folder / n).stat().st_size} for n in sorted(names)}
    path = folder / CHECKSUMS
    atomic_write_json(path, {"format": 1, "algorithm": "sha256", "files": files})
    return path


def relist_checksums(*paths: str | Path) -> None:
    """Files just written on purpose by the project's own tools (a refitted calibration sidecar) re-listed in the
    ``checksums.json`` beside them, when there is one; the other entries stay as they are."""
    for path in map(Path, paths):
        listing = path.parent / CHECKSUMS
        if not listing.is_file() or not path.is_file():
            continue
        listed = json.loads(listing.read_text(encoding="utf-8")).get("files", {})
        write_checksums(path.parent, sorted({*listed, path.name}))


def verify_checksum(path: str | Path) -> None:
    """Raise one :class:`InputError` line when ``path`` is listed in the ``checksums.json`` beside it and its
    sha256 differs (a damaged or altered shipped file); files not listed, or without such a file, pass. The hash
    is computed once per process for an unchanged file."""
    path = Path(path)
    listing = path.parent / CHECKSUMS
    if not listing.is_file():
        return
    try:
        want = json.loads(listing.read_text(encoding="utf-8"))["files"].get(path.name, {}).get("sha256")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise InputError("unreadable checksum list (expected a 'files' map of sha256)", path=str(listing)) from None
    if want is None:
        return
    got = sha256_cached(path)
    if got != want:
        raise InputError(
            f"checksum mismatch: sha256 {got[:12]}... differs from {want[:12]}... in {CHECKSUMS}; the file is "
            "damaged or was changed (reinstall the package or restore the file; after replacing a shipped model on "
            "purpose, run gnnca bench compact on its folder)",
            path=str(path),
        )


def read_lines(path: str | Path) -> list[str]:
    """Lines of a text file without their newline (a missing final newline is fine)."""
    with open(path, encoding="utf-8") as fh:
        return fh.read().splitlines()


def read_jsonl(path: str | Path, limit: int | None = None) -> list[dict[str, Any]]:
    """The records of a JSON-lines file (the first ``limit`` when given and > 0; blank lines skipped); a missing
    file or a line that is not JSON is one clear error with its line."""
    path = Path(path)
    if not path.is_file():
        raise InputError("missing", path=str(path))
    out: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if limit and len(out) >= limit:
                break
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    raise InputError("not a JSON record", path=str(path), line=n) from None
    return out


def existing_folder(path: Path, what: str) -> Path:
    """A folder a command reads: missing, or a file, is one error line naming ``what`` (an option or a role)."""
    if not path.exists():
        raise InputError(f"{what} folder not found", path=str(path))
    if not path.is_dir():
        raise InputError(f"{what} is a file, not a folder", path=str(path))
    return path


def checkpoint_paths(spec: str | Path) -> list[str]:
    """The checkpoint files a ``--checkpoint`` value names: one path, or several joined by commas (an ensemble)."""
    return [p for p in str(spec).split(",") if p] or [str(spec)]


def checkpoint_files(spec: str | Path, named: str = "") -> list[str]:
    """:func:`checkpoint_paths`, each one checked to be a readable file: a missing, folder or unreadable one is
    one :class:`InputError` line naming it (``named``: who named it, said after "checkpoint not found")."""
    parts = checkpoint_paths(spec)
    for part in parts:
        if not Path(part).exists():
            raise InputError(f"checkpoint not found{named}", path=part)
        if Path(part).is_dir():
            raise InputError("is a folder, not a checkpoint file", path=part)
        if not os.access(part, os.R_OK):
            raise InputError("checkpoint not readable (permission denied)", path=part)
    return parts


def output_folder(path: Path, flag: str, what: str) -> Path:
    """The folder an option's output (``what``) goes in: ``path`` itself when it is a folder, else its parent;
    a file, a missing folder or one that cannot be written is one :class:`InputError` line, before any work."""
    folder = path if path.is_dir() else path.parent
    if folder.exists() and not folder.is_dir():
        raise InputError(f"is a file, not a folder: {flag} cannot write its {what} in it", path=str(folder))
    if not folder.is_dir():
        raise InputError(f"folder for {flag} does not exist (create it first)", path=str(folder))
    why = cannot_write_in(folder)
    if why is not None:
        raise InputError(f"cannot write the {flag} {what} in this folder: {why}", path=str(folder))
    return folder
