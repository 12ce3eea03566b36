"""``gnnca predict``'s reading stage: every input line gives exactly one outcome, in input order, as soon as the
batch holding it is predicted (by :mod:`.pipeline`, which the stream hands each batch of parsed lines).

An outcome is a :class:`~.prediction.Prediction`, a refusal (the line's located reason) or nothing (a blank or
``#`` line), so line N of the output is line N of the input whatever happens to the lines around it. The input's
representation is fixed by the checkpoint when one is given (a line in the other one is refused, never converted),
else by the first line that reads only one way; lines that read both ways before it wait for it (at most
:data:`READ_AHEAD` lines, or until the input pauses), then count as SMILES.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from ..chem.bagfile import LineReading, ReactionInput, _reading, _why, read_line
from ..chem.limits import Limits, limit_error
from ..errors import InputError
from .prediction import JsonObject, Prediction
from .source import RawLine

READ_AHEAD = 10_000  # ambiguous leading lines held before the input's representation is settled as SMILES


@dataclass(slots=True)
class Outcome:
    """What one input line gave: a ``prediction``, a refusal (``error``: the located message, ``reason``: the
    unlocated one, for counting), or nothing (``blank``: an empty or ``#`` line). ``abstained``: the
    prediction's confidence was below ``--min-confidence`` (why, in words); its line is written empty."""

    line: int
    prediction: Prediction | None = None
    error: str | None = None
    reason: str | None = None
    blank: bool = False
    abstained: str | None = None

    @property
    def complete(self) -> bool:
        """Whether the line has its outcome (a line still waiting for its batch or its representation has none)."""
        return self.prediction is not None or self.error is not None or self.blank

    def text(self) -> str:
        """The output line: the prediction, or empty for a refused, blank or abstained line."""
        return self.prediction.prediction if self.prediction is not None and self.abstained is None else ""

    def json(self) -> JsonObject:
        """The ``--json`` object of the line."""
        if self.prediction is not None and self.abstained is not None:
            rec = self.prediction.to_json()
            keep = ("confidence", "calibrated", "in_domain", "nearest_training_similarity", "domain_notes")
            return {
                "line": self.line,
                "prediction": "",
                "abstained": True,
                "reason": self.abstained,
                **{k: rec.get(k) for k in keep},
            }
        if self.prediction is not None:
            return self.prediction.to_json()
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


@dataclass(frozen=True)
class StreamSpec:
    """How a stream reads its lines: the representation the checkpoint or ``--repr`` imposes (``fixed_repr``,
    ``None``: decided by the lines, ``fixed_by`` says who imposed it), the input's name in messages,
    ``skip_invalid`` (refused lines become outcomes; otherwise the first one raises, after every line before it
    has been given out), the size ``limits`` a parsed line must keep (``None``: none), lines per batch and
    ``min_confidence`` (a prediction below it is abstained on: its line written empty)."""

    fixed_repr: str | None = None
    fixed_by: str = ""
    source_name: str = "-"
    skip_invalid: bool = False
    limits: Limits | None = None
    batch_size: int = 256
    min_confidence: float | None = None


@dataclass(slots=True)
class Pending:
    """A parsed line waiting for its model: its outcome (its place) and what it reads."""

    out: Outcome
    reading: ReactionInput


@dataclass
class Batch:
    """Parsed lines of one representation to predict (:meth:`LineStream.steps` gives it out and waits for
    :meth:`LineStream.fill`)."""

    repr: str
    items: list[Pending]


Step = Batch | list[Outcome]  # what the stream gives out: a batch to predict, or outcomes in input order


class LineStream:
    """Reads raw input lines into parsed, checked lines and gives out the outcomes in input order.

    It reads, parses and checks; it never predicts: :meth:`steps` gives out a :class:`Batch` of parsed lines
    whenever one is due, and the caller (:mod:`.pipeline`) fills it (:meth:`fill`) with a prediction or a
    refusal per line before asking for the next step.
    """

    def __init__(self, spec: StreamSpec = StreamSpec()) -> None:
        self.spec = spec
        self.use = spec.fixed_repr
        self.fixed_by = spec.fixed_by
        self.name = spec.source_name
        self.skip_invalid = spec.skip_invalid
        self.batch_size = spec.batch_size
        self.counts = StreamCounts()
        self._queue: deque[Outcome] = deque()
        self._batch: list[Pending] = []
        self._undecided: list[tuple[Outcome, LineReading, str]] = []
        self._decider: int | None = None
        self._raise: InputError | None = None

    # ----------------------------------------------------------------- the loop
    def steps(self, lines: Iterable[RawLine], ready: Callable[[], bool] = lambda: True) -> Iterator[Step]:
        """The outcomes of ``lines``, a list per flush, in input order, and before each flush the :class:`Batch`
        to predict (filled by the caller before it asks for the next step). A flush happens when a batch is full
        or the input has nothing more waiting (``ready()`` false)."""
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

    def _give(self, settle: bool, flush: bool) -> Iterator[Step]:
        """Settle the representation (as SMILES) and give out the batch to predict when asked, then what is
        complete, then raise the refusal that stops the run, if any."""
        if settle and self.use is None and self._undecided:
            self._decide("smiles", None)
        if flush and self._batch:
            batch, self._batch = self._batch, []
            assert self.use is not None  # a line is batched once its representation is known
            yield Batch(self.use, batch)
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
            limits = self.spec.limits
            over = None if limits is None else limit_error(text, inp.terms, limits, inp.repr)
            if over is not None:
                raise over
        except InputError as err:
            self._refuse(out, err)
            return
        self._batch.append(Pending(out, inp))

    def _in_use(self, reading: LineReading) -> ReactionInput:
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
    def fill(self, batch: Batch, results: Sequence[Prediction | InputError]) -> None:
        """A batch's outcomes, one per line in its order: a prediction (placed and through the trust stage), or
        the refusal of a line its model could not take; predictions below ``min_confidence`` are abstained on."""
        floor = self.spec.min_confidence
        for item, got in zip(batch.items, results, strict=True):
            out = item.out
            if isinstance(got, InputError):
                self._refuse(out, got)
                continue
            out.prediction = got
            self.counts.predicted += 1
            self.counts.fallbacks += bool(got.fallback)
            if floor is not None and got.min_confidence_value < floor:
                out.abstained = f"confidence {got.min_confidence_value:.4f} < --min-confidence {floor:g}"
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
