"""Input lines of ``gnnca predict``, read as they arrive and never more than one bounded line at a time.

A file or a pipe is read in raw chunks and split into lines here, rather than through Python's text layer,
for three reasons: a line longer than the character limit is skipped while it is read (a 10 GB line costs no
memory), a line that is not UTF-8 is one located error rather than a traceback, and :meth:`LineSource.ready`
can tell whether another line is waiting, so a pipe's lines are predicted as soon as they arrive.
"""

from __future__ import annotations

import io
import os
import select
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from ..errors import InputError
from .stop import interruptible

BOM = b"\xef\xbb\xbf"
CHUNK = 1 << 16
_NOT_CONTINUATION = bytes(b for b in range(256) if b & 0xC0 != 0x80)  # the bytes that start a UTF-8 character


def _characters(raw: bytes | bytearray) -> int:
    """The characters of UTF-8 bytes, counted without decoding them (each character has one leading byte)."""
    return len(raw) - len(bytes(raw).translate(None, _NOT_CONTINUATION))


@dataclass(frozen=True, slots=True)
class RawLine:
    """One input line: its 1-based number and its text, or why it could not be read (``error``)."""

    number: int
    text: str
    error: InputError | None = None


class LineSource:
    """The lines of an open binary stream (a file, a pipe, a terminal, or an in-memory stream).

    ``max_chars``: a longer line is not kept: it comes back as a :class:`RawLine` with an error naming its length.
    A NUL byte in the input's first chunk means a binary file: :class:`InputError` for the whole input, at once.
    A UTF-8 byte-order mark at the start is dropped (editors on Windows write one); CRLF endings are accepted.
    """

    def __init__(self, stream: BinaryIO, name: str, max_chars: int) -> None:
        self.name = name
        self.max_bytes = 4 * max_chars + 4  # a UTF-8 character is at most 4 bytes; checked again after decoding
        self.max_chars = max_chars
        try:
            self.fd: int | None = stream.fileno()
            self._regular = stat.S_ISREG(os.fstat(self.fd).st_mode)
        except (OSError, ValueError, io.UnsupportedOperation):  # an in-memory stream (tests, embedding)
            self.fd, self._regular = None, True
        self._stream = stream
        self._buf = bytearray()
        self._eof = False
        self._first = True
        self._number = 0

    def ready(self) -> bool:
        """Whether the next line can be had without waiting (always, for a regular file)."""
        if self._regular or self._eof or b"\n" in self._buf or self.fd is None:
            return True
        try:
            readable, _, _ = select.select([self.fd], [], [], 0)
        except (OSError, ValueError):  # not selectable (e.g. some test doubles): behave like a file
            return True
        return bool(readable)

    def _fill(self) -> bool:
        """Read one chunk; false at the end of the input."""
        if not self._regular:
            interruptible()  # a pipe or a terminal may keep the read waiting: Ctrl-C must end it
        chunk = os.read(self.fd, CHUNK) if self.fd is not None else self._stream.read(CHUNK)
        if not chunk:
            self._eof = True
            return False
        if self._first:
            self._first = False
            if chunk.startswith(BOM):
                chunk = chunk[len(BOM) :]
            nul = chunk.find(b"\x00")
            if nul >= 0:
                raise InputError(
                    f"a binary file, not text (a NUL byte at byte {nul}): give one reaction per line", path=self.name
                )
        self._buf += chunk
        return True

    def __iter__(self) -> Iterator[RawLine]:
        while True:
            cut = self._buf.find(b"\n")
            while cut < 0 and len(self._buf) <= self.max_bytes and self._fill():
                cut = self._buf.find(b"\n")
            if cut < 0 and len(self._buf) > self.max_bytes:
                yield self._overlong()
                continue
            if cut < 0:  # end of input
                if self._buf:
                    raw, self._buf = bytes(self._buf), bytearray()
                    yield self._decode(raw)
                return
            raw = bytes(self._buf[:cut])
            del self._buf[: cut + 1]
            yield self._decode(raw)

    def _overlong(self) -> RawLine:
        """Skip the rest of a line over the limit without keeping it; say how many characters it had."""
        chars = 0
        while True:
            cut = self._buf.find(b"\n")
            if cut >= 0:
                end = cut - 1 if cut and self._buf[cut - 1] == 13 else cut  # CRLF: the CR is no character
                chars += _characters(self._buf[:end])
                del self._buf[: cut + 1]
                break
            chars += _characters(self._buf)
            self._buf.clear()
            if not self._fill():
                break
        self._number += 1
        err = InputError(
            f"line of {chars:,} characters is over the limit of {self.max_chars:,} (raise it with --max-chars)",
            path=self.name,
            line=self._number,
        )
        return RawLine(self._number, "", err)

    def _decode(self, raw: bytes) -> RawLine:
        self._number += 1
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            err = InputError(f"not UTF-8 text (byte {exc.start} of the line)", path=self.name, line=self._number)
            return RawLine(self._number, "", err)
        if len(text) > self.max_chars:
            err = InputError(
                f"line of {len(text):,} characters is over the limit of {self.max_chars:,} (raise it with --max-chars)",
                path=self.name,
                line=self._number,
            )
            return RawLine(self._number, "", err)
        return RawLine(self._number, text)


def text_lines(lines: list[str] | tuple[str, ...], max_chars: int, name: str = "<input>") -> Iterator[RawLine]:
    """Lines already in memory (the Python API), checked against the same character limit."""
    for i, text in enumerate(lines, start=1):
        if len(text) > max_chars:
            err = InputError(f"line of {len(text):,} characters is over the limit of {max_chars:,}", path=name, line=i)
            yield RawLine(i, "", err)
        else:
            yield RawLine(i, text.lstrip("\ufeff") if i == 1 else text)
