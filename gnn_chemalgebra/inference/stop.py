"""SIGINT (Ctrl-C) and SIGTERM during ``gnnca predict``: the run ends at once with ``128 + signal``, in one line
on stderr, and the output lines written so far are whole and in input order.

Where nothing needs cleaning up (starting, importing, loading the model, predicting in this process, reading the
input) the handler ends the process on the spot: an exception raised there could land in an import or a fork
hook, where Python swallows it or leaves a module half made. Inside :meth:`StopOnSignals.raising` (the
``--workers`` pool running, the ``--draw`` files being written) it raises :class:`StopSignal` (a
``BaseException``, as ``KeyboardInterrupt`` is, so no ``except Exception`` swallows it) and the pool is ended and
temporary files removed on the way out; ``gnnca predict`` reports it as
:class:`~gnn_chemalgebra.errors.PredictStopped`. Inside :meth:`StopOnSignals.held` (a group of output lines
being written, the pool being made or ended) the stop waits for the end of the block. The ``--workers``
processes ignore SIGINT (a terminal sends Ctrl-C to every process of the job) and die on SIGTERM, which is how
the parent's pool ends them; they never print a traceback or restart.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from ..errors import PredictStopped

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
CLEANUP_S = 5.0  # the longest a stop's clean-up may take before the process ends regardless


class StopSignal(BaseException):  # noqa: N818 - a signal, like KeyboardInterrupt, not an error
    """SIGINT or SIGTERM arrived (``signum``)."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


def exit_now(signum: int, written: int = 0) -> None:
    """End the process at once: the stop's one line on stderr, exit ``128 + signum`` (no output is half written:
    each group is flushed whole before a stop may end the run)."""
    try:
        os.write(2, f"gnnca: {PredictStopped(signum, written)}\n".encode())
    finally:
        os._exit(128 + signum)


def exit_on_signals() -> None:
    """From the start of ``gnnca predict``: a stop before its handlers are set ends the process at once."""
    for s in STOP_SIGNALS:
        signal.signal(s, lambda signum, _frame: exit_now(signum))


class StopOnSignals:
    """Handlers for :data:`STOP_SIGNALS` in the main thread while the ``with`` block runs (elsewhere none is set,
    as Python allows handlers only there). After the first signal both are ignored, so a second Ctrl-C cannot
    break the clean-up."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.pending: int | None = None
        self.written = 0  # output lines written whole (counted by held)
        self._holding = 0
        self._raising = 0
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, _frame: Any) -> None:
        if os.getpid() != self.pid:  # a forked worker before its initializer ran: behave as a worker does
            if signum == signal.SIGTERM:
                os._exit(128 + signum)
            return
        for s in STOP_SIGNALS:
            signal.signal(s, signal.SIG_IGN)
        self.pending = signum
        self._watchdog(signum)
        self._act()

    def _watchdog(self, signum: int) -> None:
        """A clean-up that does not end within :data:`CLEANUP_S` (a worker pool stuck on workers the signal
        already killed) must not hang the stop: a timer thread then ends the process, between two output groups."""

        def fire() -> None:
            if self._holding:  # a group of output lines is being written: let it finish
                timer = threading.Timer(0.2, fire)
                timer.daemon = True
                timer.start()
                return
            exit_now(signum, self.written)

        timer = threading.Timer(CLEANUP_S, fire)
        timer.daemon = True
        timer.start()

    def _act(self) -> None:
        if self.pending is None or self._holding:
            return
        if self._raising:
            signum, self.pending = self.pending, None  # raised once: the way out cleans up and reports it
            raise StopSignal(signum)
        exit_now(self.pending, self.written)

    def __enter__(self) -> StopOnSignals:
        for s in STOP_SIGNALS:
            try:
                self._previous[s] = signal.signal(s, self._handle)
            except ValueError:  # not the main thread (an embedding application's worker): no handlers
                break
        _ACTIVE.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _ACTIVE.remove(self)
        for s, handler in self._previous.items():
            signal.signal(s, handler)
        self._previous.clear()

    @contextmanager
    def held(self, lines: int = 0) -> Iterator[None]:
        """A block a stop must not cut (writing ``lines`` output lines, making or ending the worker pool): a stop
        that arrives inside acts at its end."""
        self._holding += 1
        try:
            yield
            self.written += lines
        finally:
            self._holding -= 1
        self._act()

    @contextmanager
    def raising(self) -> Iterator[None]:
        """A block with something to clean up on the way out (a worker pool, a temporary file): a stop raises
        :class:`StopSignal` there."""
        self._raising += 1
        try:
            self._act()
            interruptible()  # the pool's results are waited for
            yield
        finally:
            self._raising -= 1


_ACTIVE: list[StopOnSignals] = []  # the handlers of the running gnnca predict, if any


def interruptible() -> None:
    """Before a wait that may last (a read from a pipe or a terminal, the worker pool's results), while
    ``gnnca predict``'s handlers are set: the stop signals interrupt system calls again. RDKit's substructure search
    and tautomer enumeration set a Ctrl-C handler of their own for the call and put the previous one back with
    SA_RESTART, so the kernel resumed a blocked read or lock after Ctrl-C without Python's handler running
    (``gnnca predict -`` ignored Ctrl-C until its next input line)."""
    if not _ACTIVE:  # an embedding application's own handlers are left as they are
        return
    for s in STOP_SIGNALS:
        try:
            signal.siginterrupt(s, True)  # the handler kept, SA_RESTART cleared
        except (OSError, ValueError):
            pass


def stop_held() -> AbstractContextManager[None]:
    """:meth:`StopOnSignals.held` of the running ``gnnca predict`` (nothing to hold elsewhere, e.g. the API)."""
    return _ACTIVE[-1].held() if _ACTIVE else nullcontext()


def stop_raising() -> AbstractContextManager[None]:
    """:meth:`StopOnSignals.raising` of the running ``gnnca predict`` (nothing elsewhere)."""
    return _ACTIVE[-1].raising() if _ACTIVE else nullcontext()


def reader_gone(out: Any) -> int:
    """The output pipe's reader went away (``| head -1``): no message, exit ``128 + SIGPIPE`` as a writer killed
    by the pipe would; standard output is pointed at the null device so Python's flush at exit stays quiet."""
    if out is sys.stdout:
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # no file descriptor to repoint (an embedding application's stream)
            pass
    return 128 + signal.SIGPIPE


def worker_signals() -> None:
    """In a ``--workers`` process: SIGINT ignored (the parent decides), SIGTERM the default (the pool's end)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
