"""The project's own exceptions: every bad input is reported with where it came from and why."""

from __future__ import annotations

import signal


def cut(text: str, keep: int = 80) -> str:
    """``text`` as a message shows it: a long term (a 10 MB line, a 2,000-atom SMILES) is cut to its first
    ``keep`` characters and its length, so one bad input is one readable line, not megabytes of it."""
    if len(text) <= keep:
        return text
    return f"{text[:keep]}... ({len(text):,} characters)"


class ChemAlgebraError(Exception):
    """Base class of every error the project raises on purpose."""


class InputError(ChemAlgebraError):
    """Bad user input, located by file, line (1-based) and offending term.

    ``str(err)`` is one line ``file:line: reason (term 'x')`` suitable for a CLI error message.
    """

    def __init__(
        self,
        reason: str,
        *,
        path: str | None = None,
        line: int | None = None,
        term: str | None = None,
    ) -> None:
        self.reason = reason
        self.path = path
        self.line = line
        self.term = term
        super().__init__(self.format())

    def format(self) -> str:
        where = ""
        if self.path is not None:
            where = str(self.path)
        if self.line is not None:
            where = f"{where}:{self.line}" if where else f"line {self.line}"
        msg = f"{where}: {cut(self.reason, 400)}" if where else cut(self.reason, 400)
        if self.term is not None:
            msg += f" (term {cut(self.term)!r})"
        return msg

    def located(self, path: str | None = None, line: int | None = None) -> InputError:
        """Return a copy (same class) with the file and line filled in (keeps values already set). An error that
        already names another file (a checkpoint that failed to load while a line was read) keeps no line: the
        line number belongs to the input, not to that file."""
        other_file = self.path is not None and path is not None and str(self.path) != str(path)
        return type(self)(
            self.reason,
            path=self.path if self.path is not None else path,
            line=self.line if self.line is not None or other_file else line,
            term=self.term,
        )


class ChemistryError(InputError):
    """A molecule that RDKit (or the formula parser) cannot read."""


class Stopped(ChemAlgebraError):
    """A run stopped by a signal (SIGTERM, SIGINT). Not a failure of the input: the CLI reports it in one line
    and exits with ``128 + signal`` (143 for SIGTERM, 130 for SIGINT), the shell's convention, so a scheduler sees
    the run was stopped, not that it finished."""

    def __init__(self, signum: int, message: str) -> None:
        self.signum = signum
        self.exit_code = 128 + signum
        super().__init__(message)


class TrainingStopped(Stopped):
    """Training was asked to stop (SIGTERM, SIGINT) and saved ``last.pt`` after the step in progress."""

    def __init__(self, signum: int, step: int, checkpoint: str) -> None:
        self.step, self.checkpoint = step, checkpoint
        super().__init__(
            signum,
            f"{signal.Signals(signum).name}: training stopped after optimiser step {step}; saved {checkpoint} "
            "(continue with the same command and --resume)",
        )


class PredictStopped(Stopped):
    """``gnnca predict`` stopped by a signal; the output lines written before it are whole and in input order."""

    def __init__(self, signum: int, written: int | None = None) -> None:
        self.written = written
        kept = "" if written is None else f"; the output holds the first {written:,} line(s), whole and in input order"
        super().__init__(signum, f"{signal.Signals(signum).name}: prediction stopped{kept}")


class BalanceError(ChemAlgebraError):
    """An equation that has no positive balancing, or an inconsistent decomposition."""
