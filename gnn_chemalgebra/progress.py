"""Progress bars for long user-facing work (``gnnca predict``, ``gnnca evaluate``).

A bar is drawn with tqdm on stderr only for inputs of more than :data:`MIN_LINES` lines and only when stderr
is a terminal, so logs, pipes and captured output never get bar characters; ``--quiet`` turns it off.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import Any, TextIO, TypeVar

MIN_LINES = 1000

T = TypeVar("T")


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def wanted(n_lines: int, *, quiet: bool = False, stream: TextIO | None = None) -> bool:
    """Whether a job over ``n_lines`` lines shows a bar: more than 1,000 lines, not quiet, stderr a terminal."""
    return not quiet and n_lines > MIN_LINES and _is_terminal(sys.stderr if stream is None else stream)


class _Off:
    """The bar when none is wanted: same calls, no output."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> _Off:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def bar(total: int, desc: str, *, enabled: bool, unit: str = "line") -> Any:
    """A tqdm bar on stderr (``update(n)``, ``close()``, context manager), or a silent stand-in."""
    if not enabled:
        return _Off()
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False, dynamic_ncols=True, mininterval=0.5)


class Progress:
    """A bar not drawn yet, handed to the job that counts: drawn on ``with`` (:func:`bar`), closed after it."""

    def __init__(self, total: int, desc: str, *, enabled: bool, unit: str = "line") -> None:
        self.total, self.desc, self.enabled, self.unit = total, desc, enabled, unit
        self._bar: Any = None

    def __enter__(self) -> Any:
        self._bar = bar(self.total, self.desc, enabled=self.enabled, unit=self.unit)
        return self._bar.__enter__()

    def __exit__(self, *exc: object) -> None:
        self._bar.__exit__(*exc)


def for_file(path: str, desc: str, *, quiet: bool = False) -> Progress:
    """The bar of a job over the lines of a file (``-``: stdin, no total, no bar): counted first (a quick byte
    scan) only where a bar could be wanted."""
    total = count_lines(path) if path != "-" and wanted(MIN_LINES + 1, quiet=quiet) else None
    return Progress(total or 0, desc, enabled=total is not None and wanted(total, quiet=quiet))


def count_lines(path: str) -> int | None:
    """Lines of a file (a quick byte scan; ``None`` when unreadable)."""
    try:
        with open(path, "rb") as fh:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
    except OSError:
        return None


def track(items: Iterable[T], total: int, desc: str, *, enabled: bool, unit: str = "line") -> Iterator[T]:
    """Yield ``items``, counting them on a bar when ``enabled``."""
    with bar(total, desc, enabled=enabled, unit=unit) as b:
        for item in items:
            yield item
            b.update(1)
