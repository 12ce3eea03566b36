"""``gnnca predict`` as a stream: every input line gives exactly one outcome, in input order, as soon as the
batch holding it is predicted.

An outcome is a prediction record, a refusal (the line's located reason) or nothing (a blank or ``#`` line), so
line N of the output is line N of the input whatever happens to the lines around it. The input's representation
is fixed by the checkpoint when one is given (a line in the other one is refused, never converted), else by the
first line that reads only one way; lines that read both ways before it wait for it (at most
:data:`READ_AHEAD` lines, or until the input pauses), then count as SMILES.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..chem.bag import format_bag
from ..chem.bagfile import LineReading, _reading, _why, read_line
from ..data.dataset import BagExample
from ..errors import InputError
from .run import line_vtype, to_example

READ_AHEAD = 10_000  # ambiguous leading lines held before the input's representation is settled as SMILES


@dataclass(slots=True)
class Outcome:
    """What one input line gave: a ``record``, a refusal (``error``: the located message, ``reason``: the
    unlocated one, for counting), or nothing (``blank``: an empty or ``#`` line). ``abstained``: the record's
    confidence was below ``--min-confidence`` (why, in words); its line is written empty."""

    line: int
    record: dict[str, Any] | None = None
    error: str | None = None
    reason: str | None = None
    blank: bool = False
    abstained: str | None = None

    @property
    def complete(self) -> bool:
        """Whether the line has its outcome (a line still waiting for its batch or its representation has none)."""
        return self.record is not None or self.error is not None or self.blank

    def text(self) -> str:
        """The output line: the prediction, or empty for a refused, blank or abstained line."""
        return self.record["prediction"] if self.record is not None and self.abstained is None else ""

    def json(self) -> dict[str, Any]:
        if self.record is not None and self.abstained is not None:
            keep = ("confidence", "calibrated", "in_domain", "nearest_training_similarity", "domain_notes")
            return {
                "line": self.line,
                "prediction": "",
                "abstained": True,
                "reason": self.abstained,
                **{k: self.record.get(k) for k in keep},
            }
        if self.record is not None:
            return self.record
        if self.blank:
            return {"line": self.line, "prediction": "", "blank": True}
        return {"line": self.line, "prediction": "", "error": self.error}


@dataclass
class StreamCounts:
    """What a stream did with its lines: predicted, blank, refused (by reason), fell back, abstained (below
    ``--min-confidence``)."""

    lines: int = 0
    predicted: int = 0
    blank: int = 0
    fallbacks: int = 0
    abstained: int = 0
    refused: Counter = field(default_factory=Counter)

    @property
    def refused_total(self) -> int:
        return sum(self.refused.values())


class LineStream:
    """Turns raw input lines into outcomes in input order, batch by batch.

    ``predictor_for(repr)`` returns the predictor for a representation (the checkpoint's, or the bundled model
    of that representation, loaded on first use). ``fixed_repr``: the representation the checkpoint or
    ``--repr`` imposes (``None``: decided by the lines), with ``fixed_by`` saying who imposed it.
    ``skip_invalid``: refused lines become outcomes; otherwise the first one raises, after every line before it
    has been given out. ``check(text, reading)``: an extra test of a parsed line (the size limits): the error
    that refuses it, or ``None``.
    ``on_unequal``: called once, at the first line with unequal coefficients. ``annotate(predictor, records)``:
    adds fields to a batch's records in place (the trust fields: calibrated confidence, in-domain flag, top-k);
    ``min_confidence``: a record whose ``confidence`` is below it is abstained on (its line written empty).
    """

    def __init__(
        self,
        predictor_for: Callable[[str], Any],
        *,
        fixed_repr: str | None = None,
        fixed_by: str = "",
        source_name: str = "-",
        skip_invalid: bool = False,
        coef_set: str = "auto",
        line_type: str = "auto",
        beam: int = 1,
        batch_size: int = 256,
        check: Callable[[str, Any], InputError | None] | None = None,
        on_unequal: Callable[[], None] | None = None,
        predict_batch: Callable[[Any, list[BagExample]], list[dict[str, Any]]] | None = None,
        annotate: Callable[[Any, list[dict[str, Any]]], None] | None = None,
        min_confidence: float | None = None,
    ) -> None:
        self.predictor_for = predictor_for
        self.use = fixed_repr
        self.fixed_by = fixed_by
        self.name = source_name
        self.skip_invalid = skip_invalid
        self.coef_set, self.line_type, self.beam, self.batch_size = coef_set, line_type, beam, batch_size
        self.check = check
        self.on_unequal = on_unequal
        self.predict_batch = predict_batch or (lambda p, exs: p.predict(exs, batch_size=len(exs), beam=self.beam))
        self.annotate, self.min_confidence = annotate, min_confidence
        self.counts = StreamCounts()
        self._queue: deque[Outcome] = deque()
        self._batch: list[tuple[Outcome, BagExample]] = []
        self._undecided: list[tuple[Outcome, LineReading, str]] = []
        self._decider: int | None = None
        self._raise: InputError | None = None

    # ----------------------------------------------------------------- the loop
    def run(self, lines: Iterable[Any], ready: Callable[[], bool] = lambda: True) -> Iterator[list[Outcome]]:
        """Outcomes of ``lines`` (:class:`~.source.RawLine` s), a list per flush, in input order. A flush
        happens when a batch is full or the input has nothing more waiting (``ready()`` false)."""
        for raw in lines:
            self.counts.lines += 1
            out = Outcome(raw.number)
            self._queue.append(out)
            if raw.error is not None:
                self._refuse(out, raw.error)
            elif not raw.text.strip() or raw.text.lstrip().startswith("#"):
                out.blank = True
                self.counts.blank += 1
            else:
                self._take(out, raw.text)
            waiting = ready()
            settle = not waiting or len(self._undecided) >= READ_AHEAD or self._raise is not None
            flush = len(self._batch) >= self.batch_size or not waiting or self._raise is not None
            yield from self._give(settle, flush)
        yield from self._give(True, True)

    def _give(self, settle: bool, flush: bool) -> Iterator[list[Outcome]]:
        """Settle the representation (as SMILES) and predict the batch when asked, give out what is complete,
        then raise the refusal that stops the run, if any."""
        if settle and self.use is None and self._undecided:
            self._decide("smiles", None)
        if flush:
            self._flush()
        done = self._done()
        if done:
            yield done
        if self._raise is not None:
            raise self._raise

    # ----------------------------------------------------------------- one line
    def _take(self, out: Outcome, text: str) -> None:
        try:
            reading = read_line(text)
        except InputError as err:
            self._refuse(out, err)
            return
        if self.use is None:
            kind = reading.kind
            if kind is None:
                self._refuse(out, self._neither(reading))
                return
            if kind == "both":
                self._undecided.append((out, reading, text))
                return
            self._decide(kind, out.line)
        self._accept(out, reading, text)

    def _decide(self, repr: str, line: int | None) -> None:
        self.use, self._decider = repr, line
        waiting, self._undecided = self._undecided, []
        for out, reading, text in waiting:
            self._accept(out, reading, text)

    def _accept(self, out: Outcome, reading: LineReading, text: str) -> None:
        try:
            inp = self._in_use(reading)
            predictor = self.predictor_for(self.use)
            vtype = line_vtype(inp.terms, self.line_type, predictor.vtype)
            example = to_example(inp, predictor.repr, vtype, self.coef_set)
            if self.check is not None:
                over = self.check(text, inp)
                if over is not None:
                    raise over
        except InputError as err:
            self._refuse(out, err)
            return
        if self.on_unequal is not None and len({t.coef for t in inp.terms}) > 1:
            self.on_unequal()
            self.on_unequal = None
        self._batch.append((out, example))

    def _in_use(self, reading: LineReading) -> Any:
        kind, use = reading.kind, self.use
        if kind is None:
            raise self._neither(reading)
        other = "formula" if use == "smiles" else "smiles"
        if kind == other:
            err = reading.smiles_error if use == "smiles" else reading.formula_error
            names = {"smiles": "SMILES", "formula": "formulas"}
            if self._decider is None and self.fixed_by:
                raise InputError(
                    f"the line reads only as {names[other]}, but {self.fixed_by} reads {names[use]} ({_why(err)}); "
                    f"pass a {names[other]} checkpoint or write the line as {names[use]}"
                )
            raise InputError(
                f"not {names[use]} ({_why(err)}) in a {names[use]} input (line {self._decider} reads only as "
                f"{names[use]}); the line reads as {names[other]}: mixed representations (pass --repr {other})"
            )
        return _reading(reading, use)  # type: ignore[arg-type]

    @staticmethod
    def _neither(reading: LineReading) -> InputError:
        return InputError(f"neither SMILES ({_why(reading.smiles_error)}) nor formulas ({_why(reading.formula_error)})")

    def _refuse(self, out: Outcome, err: InputError) -> None:
        located = err.located(self.name, out.line)
        if not self.skip_invalid and self._raise is None:
            self._raise = located
        out.error, out.reason = str(located), err.reason
        self.counts.refused[_reason_key(err.reason)] += 1

    # ----------------------------------------------------------------- batches
    def _flush(self) -> None:
        if not self._batch:
            return
        batch, self._batch = self._batch, []
        predictor = self.predictor_for(self.use)
        records = self.predict_batch(predictor, [ex for _, ex in batch])
        for (out, ex), rec in zip(batch, records, strict=True):
            out.record = {
                "line": out.line,
                "source": format_bag(ex.terms),
                "coef_set": ex.cset,
                "line_type": ex.vtype,
                **rec,
            }
            self.counts.predicted += 1
        if self.annotate is not None:
            self.annotate(predictor, [out.record for out, _ in batch])
        self.counts.fallbacks += sum(bool(out.record.get("fallback")) for out, _ in batch)  # after the rules stage
        if self.min_confidence is not None:
            for out, _ in batch:
                c = float(out.record.get("confidence") or 0.0)
                if c < self.min_confidence:
                    out.abstained = f"confidence {c:.4f} < --min-confidence {self.min_confidence:g}"
                    self.counts.abstained += 1

    def _done(self) -> list[Outcome]:
        """The outcomes at the head of the queue that are complete (a line waiting for its batch, or for the
        input's representation, holds back every line after it)."""
        done: list[Outcome] = []
        while self._queue and self._queue[0].complete:
            out = self._queue.popleft()
            if self._raise is not None and out.error == str(self._raise):
                self._queue.appendleft(out)  # the raising line is reported by the exception, not as output
                break
            done.append(out)
        return done


def _reason_key(reason: str) -> str:
    """A reason as counted: the words before the first parenthesis or colon, so lines refused for the same
    cause with different terms count together."""
    for sep in (" (", ": "):
        if sep in reason:
            reason = reason.split(sep, 1)[0]
    return reason[:120]
