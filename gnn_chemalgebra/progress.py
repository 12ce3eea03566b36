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


def track(items: Iterable[T], total: int, desc: str, *, enabled: bool, unit: str = "line") -> Iterator[T]:
    """Yield ``items``, counting them on a bar when ``enabled``."""
    with bar(total, desc, enabled=enabled, unit=unit) as b:
        for item in items:
            yield item
            b.update(1)
