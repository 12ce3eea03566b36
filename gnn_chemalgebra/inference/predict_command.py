"""What ``gnnca predict`` does between its options and its output: check every option before any work, open the
input, pick the checkpoint, stream the lines through :class:`~.stream.LineStream`, write each outcome as it is
ready, and report what was refused, blank or fell back. The CLI only builds :class:`PredictOptions`."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..chem.limits import Limits, limit_error
from ..config import DecodeConfig
from ..errors import InputError, PredictStopped
from ..io import cannot_write_in, checkpoint_paths
from .byproduct_convention import check_convention, resolve_byproducts
from .output import write_outcomes
from .predict_sets import RunTrust, check_trust_options
from .report import count_fallbacks
from .rules_stage import rule_records, rules_apply
from .run import COEF_SETS, decode_overrides, default_checkpoint, line_vtype, resolve_extent
from .source import LineSource, RawLine, text_lines
from .stop import StopOnSignals, StopSignal, reader_gone
from .stream import LineStream, StreamCounts

REPRS = ("auto", "smiles", "formula")


@dataclass
class PredictOptions:
    """The options of ``gnnca predict`` (see its ``--help``)."""

    input: str
    checkpoint: Path | None = None
    edit_checkpoint: Path | None = None
    repr: str = "auto"
    extent: str = "auto"
    byproducts: str = "auto"
    settings: list[str] = field(default_factory=list)
    as_json: bool = False
    draw: Path | None = None
    skip_invalid: bool = False
    beam: int = 1
    coef_set: str = "auto"
    line_type: str = "auto"
    max_chars: int | None = None  # None: the default of chem.limits; 0: no limit
    max_atoms: int | None = None
    max_molecules: int | None = None
    max_total_atoms: int | None = None
    max_coef: int | None = None
    device: str = "cpu"
    batch_size: int = 256
    workers: int = 1
    quiet: bool = False
    top_k: int = 1
    min_confidence: float | None = None
    columns: bool = False
    keep_out_of_domain: bool = False  # --min-confidence keeps lines the in-domain index marks out of domain
    coverage: float | None = None  # conformal prediction sets at this coverage (:mod:`.predict_sets`)
    conformal: Path | None = None  # the conformal sidecar (default: beside the checkpoint)


def limits_of(opts: PredictOptions) -> Limits:
    """The size limits a line must keep (the defaults, with the ``--max-*`` options put in)."""
    return Limits.from_options(opts.max_atoms, opts.max_molecules, opts.max_chars, opts.max_total_atoms, opts.max_coef)


def check_options(opts: PredictOptions) -> None:
    """Every option checked before a model is loaded or a line read: one :class:`InputError` line each."""
    if opts.coef_set not in COEF_SETS:
        raise InputError(f"--coef-set must be in, out or auto, got {opts.coef_set!r}")
    if opts.repr not in REPRS:
        raise InputError(f"--repr must be smiles, formula or auto, got {opts.repr!r}")
    line_vtype([], opts.line_type, 1)
    check_convention(opts.byproducts)
    limits_of(opts)  # a negative limit is one line
    decode_overrides(DecodeConfig(), opts.settings)  # a bad --set item fails here, even for an input of no lines
    for name in ("beam", "batch_size", "workers"):
        if getattr(opts, name) < 1:
            raise InputError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(opts, name)}")
    if opts.top_k < 1:
        raise InputError(f"--top-k must be at least 1, got {opts.top_k}")
    if opts.min_confidence is not None and not 0.0 <= opts.min_confidence <= 1.0:
        raise InputError(f"--min-confidence must lie in [0, 1], got {opts.min_confidence}")
    if opts.draw is not None:
        folder = Path(opts.draw) if Path(opts.draw).is_dir() else Path(opts.draw).parent
        if not folder.is_dir():
            raise InputError("folder for --draw does not exist (create it first)", path=str(folder))
        why = cannot_write_in(folder)
        if why is not None:
            raise InputError(f"cannot write the --draw images in this folder: {why}", path=str(folder))
    if opts.input != "-":
        path = Path(opts.input)
        if not path.exists():
            raise InputError("input file not found", path=opts.input)
        if path.is_dir():
            raise InputError("is a folder, not an input file", path=opts.input)
    for spec in (opts.checkpoint, opts.edit_checkpoint):
        if spec is None:
            continue
        for part in checkpoint_paths(spec):
            if not Path(part).exists():
                raise InputError("checkpoint not found", path=part)
            if Path(part).is_dir():
                raise InputError("is a folder, not a checkpoint file", path=part)
            if not os.access(part, os.R_OK):
                raise InputError("checkpoint not readable (permission denied)", path=part)


class Predictors:
    """The predictor of each representation, loaded on first use: the given checkpoint, or the bundled model."""

    def __init__(
        self,
        opts: PredictOptions,
        extent: str,
        after_load: Callable[[], None] | None = None,
        *,
        domain: bool | None = None,
        note: Callable[[str], None] | None = None,
    ) -> None:
        from ..device import select_device

        self.opts, self.note = opts, note
        self.extent = extent
        # the by-product convention: benchmark for a benchmark source file or --extent bayes, else chemist
        self.byproducts = resolve_byproducts(opts.byproducts, None if opts.input == "-" else opts.input, opts.extent)
        self.rules = rules_apply(self.byproducts, None if opts.input == "-" else opts.input)  # rules_stage.py
        self.trust = RunTrust(opts)  # conformal sets, out-of-domain abstention
        self.domain = (opts.as_json or self.trust.abstain_ood) if domain is None else domain
        self.device = select_device(opts.device)  # an unknown or missing device fails here, before any load
        self.after_load = after_load
        self._loaded: dict[str, Any] = {}
        self._trust: dict[int, Any] = {}
        self.explicit = opts.checkpoint is not None or bool(os.environ.get("GNNCA_CHECKPOINT"))
        self._by_repr: dict[str, Any] = {}

    def load(self, path: str) -> Any:
        from .predictor import Predictor, PredictorOptions

        if path not in self._loaded:
            edit = str(self.opts.edit_checkpoint) if self.opts.edit_checkpoint is not None else None
            options = PredictorOptions(
                edit, self.extent, overrides=tuple(self.opts.settings), byproducts=self.byproducts
            )
            self._loaded[path] = Predictor.from_checkpoint(path, self.device, options)
            self._loaded[path].second_opinion = self._wants_second_opinion(self._loaded[path])
            self.trust.check_model(self._loaded[path])  # no conformal fit for it: one line, nothing predicted
            if self.after_load is not None:
                self.after_load()
                self.after_load = None
        return self._loaded[path]

    def _wants_second_opinion(self, predictor: Any) -> bool:
        """Whether a formula pair's Type-1 lines get a second opinion: where the confidence shows (--json, the
        Python API, --min-confidence, --columns, --top-k) and the calibration beside the checkpoint has a model
        that reads it (else the second pass would be wasted)."""
        from ..trust.calibrators import SECOND_OPINION
        from .trust_stage import trust_for

        if not self.confidence_shown or getattr(predictor, "type1", None) is None:
            return False
        trust = trust_for(predictor)
        return trust is not None and trust.calibrator is not None and SECOND_OPINION in trust.calibrator.top

    @property
    def confidence_shown(self) -> bool:
        """Whether the output shows or uses a confidence (--json, --min-confidence, --columns, --top-k)."""
        o = self.opts
        return self.domain or o.min_confidence is not None or o.columns or o.top_k > 1

    def annotate(self, predictor: Any, records: list[dict[str, Any]]) -> None:
        """The trust fields of a batch's records: the checkpoint's calibration and in-domain index when saved
        beside it, else the raw confidence marked uncalibrated. The in-domain fields only for --json (text output
        does not show them, and the index search is most of the cost; the Python API asks for them)."""
        from ..trust.annotate import annotate_records
        from .trust_stage import trust_for

        key = id(predictor)
        if key not in self._trust:
            self._trust[key] = trust_for(predictor)
            if self._trust[key] is None and self.note is not None and self.confidence_shown:
                src = getattr(predictor, "source", None)
                self.note(
                    f"gnnca: note: no calibration for {src.checkpoint if src else 'this model'} (no .trust.json "
                    'beside it, or fitted with other models): the confidences are raw ("calibrated": false)'
                )
        annotate_records(records, self._trust[key], predictor.repr, self.opts.top_k, domain=self.domain)
        self.trust.annotate(predictor, records)
        if self.rules:  # a user's line that a rule covers is written by the rule
            rule_records(records, predictor.repr)

    def fixed(self) -> Any | None:
        """The checkpoint the user named ($GNNCA_CHECKPOINT included), loaded; ``None`` for the bundled ones."""
        if not self.explicit:
            return None
        path = str(self.opts.checkpoint) if self.opts.checkpoint is not None else str(default_checkpoint())
        named = "" if self.opts.checkpoint is not None else " (named by $GNNCA_CHECKPOINT)"
        for part in checkpoint_paths(path):
            if not Path(part).is_file():
                raise InputError(f"checkpoint not found{named}", path=part)
        return self.load(path)

    def for_repr(self, repr: str) -> Any:
        """The predictor for lines in ``repr`` (asked once per line: resolved once per representation)."""
        got = self._by_repr.get(repr)
        if got is not None:
            return got
        if self.explicit:
            got = self.fixed()
        else:
            path = default_checkpoint(repr)
            if not path.is_file():
                raise InputError("the bundled checkpoint is missing (reinstall the package)", path=str(path))
            got = self.load(str(path))
        self._by_repr[repr] = got
        return got


def _open_input(opts: PredictOptions) -> tuple[Any, str, Any]:
    """The input as a binary stream, its name in messages, and what to close afterwards."""
    if opts.input == "-":
        return getattr(sys.stdin, "buffer", sys.stdin), "<stdin>", None
    try:
        fh = open(opts.input, "rb")  # noqa: SIM115 - closed by run_predict
    except OSError as err:
        raise InputError(f"cannot read input: {err.strerror}", path=opts.input) from None
    return fh, opts.input, fh


def run_predict(
    opts: PredictOptions,
    *,
    echo: Callable[[str], None],
    out: TextIO | None = None,
    after_load: Callable[[], None] | None = None,
) -> int:
    """Run ``gnnca predict``; returns the exit code (0, or 2 when every line was refused). Input errors of the
    options, the checkpoint or a line (without ``skip_invalid``) raise :class:`InputError`."""
    out = out if out is not None else sys.stdout
    if out is None:  # the shell closed it (>&-): Python has no stdout
        raise InputError("standard output is closed: nothing to write the predictions to (redirect it to a file)")
    check_options(opts)
    check_trust_options(opts)
    stop = StopOnSignals()
    try:
        with stop:
            return _run(opts, echo, out, after_load, stop)
    except StopSignal as stopped:
        raise PredictStopped(stopped.signum, stop.written) from None
    except BrokenPipeError:
        return reader_gone(out)


def _run(opts: PredictOptions, echo: Callable[[str], None], out: TextIO, after_load: Any, stop: StopOnSignals) -> int:
    if opts.top_k > 1 and not (opts.as_json or opts.columns or opts.coverage is not None):
        k = opts.top_k
        echo(f"gnnca: --top-k {k}: the alternatives are shown with --json or --columns; text lines are the best")
    if opts.beam > 1 and not opts.as_json:
        b = opts.beam
        echo(f"gnnca: --beam {b}: the hypotheses are listed with --json (under 'beam'); text lines are the best")
    extent = resolve_extent(opts.extent, None if opts.input == "-" else opts.input)
    predictors = Predictors(opts, extent, after_load, note=echo)
    predictors.fixed()  # the checkpoint the user named loads (or fails) before the input is opened

    def unequal_notice() -> None:
        if opts.extent == "auto" and extent == "limiting":
            echo(
                "gnnca: --extent auto: unequal coefficients read as amounts (limiting reactant consumed); "
                "pass --extent bayes for benchmark lines"
            )

    stream_in, name, fh = _open_input(opts)
    try:
        source = LineSource(stream_in, name, max_chars_of(opts))
        stream = line_stream(opts, predictors, name, on_unequal=unequal_notice)
        records = write_outcomes(stream, source, opts, out, echo, stop, predictors.trust)
    finally:
        if fh is not None:
            fh.close()
    if opts.draw is not None and records:
        from .draw import draw_reactions  # RDKit drawing + PIL: only when asked

        with stop.raising():  # a stop removes the temporary file of the image being written
            draw_reactions(records, opts.draw, stream.use or "smiles")
    predictors.trust.report(stream.counts.predicted, echo)
    return _report(stream.counts, opts, echo)


def max_chars_of(opts: PredictOptions) -> int:
    """The character limit of one input line (0, no limit: a number no line reaches)."""
    return limits_of(opts).max_chars or sys.maxsize // 8


def line_stream(
    opts: PredictOptions,
    predictors: Predictors,
    name: str,
    *,
    on_unequal: Callable[[], None] | None = None,
    min_confidence: float | None = None,
) -> LineStream:
    """The one reading and predicting path, for ``gnnca predict`` and the Python API: lines of the checkpoint's
    representation (the user's checkpoint fixes it; else ``--repr``, else the first line that reads one way),
    checked against the size limits, batched, predicted and annotated with the trust fields."""
    fixed = predictors.fixed()
    fixed_repr, fixed_by = None, ""
    if fixed is not None:
        fixed_repr, fixed_by = fixed.repr, "the checkpoint"
        if opts.repr not in ("auto", fixed.repr):
            raise InputError(f"--repr {opts.repr}, but the checkpoint reads {fixed.repr}")
    elif opts.repr != "auto":
        fixed_repr, fixed_by = opts.repr, f"--repr {opts.repr}"
    limits = limits_of(opts)
    return LineStream(
        predictors.for_repr,
        fixed_repr=fixed_repr,
        fixed_by=fixed_by,
        source_name=name,
        skip_invalid=opts.skip_invalid,
        coef_set=opts.coef_set,
        line_type=opts.line_type,
        beam=max(opts.beam, opts.top_k),
        batch_size=opts.batch_size * opts.workers,
        on_unequal=on_unequal,
        check=lambda text, inp: limit_error(text, inp.terms, limits, inp.repr),
        predict_batch=_batch_predictor(opts),
        annotate=predictors.annotate,
        min_confidence=opts.min_confidence if min_confidence is None else min_confidence,
    )


@dataclass
class PredictResult:
    """Records (one per predicted line, with its 1-based ``line``), refused lines' messages, and the count of
    lines written without a balanced hypothesis (``fallback``)."""

    records: list[dict[str, Any]] = field(default_factory=list)
    repr: str | None = None
    refused: list[tuple[int, str]] = field(default_factory=list)  # (line, located message) of each refused line
    blank: list[int] = field(default_factory=list)  # the blank or ``#`` lines (nothing to predict)

    @property
    def invalid(self) -> list[str]:
        """The refused lines' messages."""
        return [e for _, e in self.refused]

    @property
    def fallbacks(self) -> int:
        return count_fallbacks(self.records)


def collect(stream: LineStream, lines: Iterable[RawLine]) -> PredictResult:
    """Every outcome of ``lines`` at once (the Python API, ``gnnca bench``): records, refusals and blank lines in
    input order.
    The objects alive before (torch, RDKit, the model) are kept out of the garbage collector's full collections
    meanwhile (``gc.freeze``); nothing is computed differently."""
    res = PredictResult()
    with _frozen_heap():
        for group in stream.run(lines):
            for o in group:
                if o.record is not None:
                    res.records.append(o.record)
                elif o.error is not None:
                    res.refused.append((o.line, o.error))
                elif o.blank:
                    res.blank.append(o.line)
    res.repr = stream.use
    return res


@contextmanager
def _frozen_heap() -> Iterator[None]:
    if not gc.isenabled():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


class _Given:
    """A predictor already loaded, in the place of :class:`Predictors` (:func:`predict_lines`)."""

    def __init__(self, predictor: Any, top_k: int) -> None:
        self.predictor, self.top_k = predictor, top_k

    def fixed(self) -> Any:
        return self.predictor

    def for_repr(self, _repr: str) -> Any:
        return self.predictor

    @property
    def confidence_shown(self) -> bool:
        """Whether the output shows or uses a confidence (--json, --min-confidence, --columns, --top-k)."""
        o = self.opts
        return self.domain or o.min_confidence is not None or o.columns or o.top_k > 1

    def annotate(self, predictor: Any, records: list[dict[str, Any]]) -> None:
        from ..trust.annotate import annotate_records
        from .trust_stage import trust_for

        annotate_records(records, trust_for(predictor), predictor.repr, self.top_k)


def predict_lines(
    lines: Sequence[str],
    predictor: Any,
    *,
    source_name: str = "-",
    coef_set: str = "auto",
    skip_invalid: bool = False,
    beam: int = 1,
    batch_size: int = 256,
    line_type: str = "auto",
    top_k: int = 1,
    workers: int = 1,
) -> PredictResult:
    """Lines through a loaded predictor on the path of ``gnnca predict --json`` (the benchmark stages, tests):
    a refused line raises (located) unless ``skip_invalid``, then it is listed in ``invalid``. No size limit
    applies (benchmark lines are predicted whatever their size) but the coefficient bound (``--max-coef``: the
    extent search's memory grows with the coefficients)."""
    opts = PredictOptions(
        input="-",
        max_chars=0,
        max_atoms=0,
        max_molecules=0,
        max_total_atoms=0,
        coef_set=coef_set,
        skip_invalid=skip_invalid,
        beam=beam,
        batch_size=batch_size,
        line_type=line_type,
        top_k=top_k,
        workers=workers,
    )
    check_options(opts)
    stream = line_stream(opts, _Given(predictor, top_k), source_name)  # type: ignore[arg-type]
    return collect(stream, text_lines(list(lines), max_chars_of(opts), source_name))


def _batch_predictor(opts: PredictOptions) -> Callable[[Any, list], list[dict[str, Any]]]:
    """One flushed batch -> records: in this process, or split over ``--workers`` processes (input order kept).
    The beam is at least ``--top-k`` wide (the alternatives come from it)."""
    beam = max(opts.beam, opts.top_k)
    if opts.workers <= 1:
        return lambda p, exs: p.predict(exs, batch_size=opts.batch_size, beam=beam)

    from ..progress import bar
    from .run import _predict_in_workers

    def pooled(p: Any, exs: list) -> list[dict[str, Any]]:
        chunks = [exs[s : s + opts.batch_size] for s in range(0, len(exs), opts.batch_size)]
        if len(chunks) == 1:
            return p.predict(exs, batch_size=opts.batch_size, beam=beam)
        with bar(len(exs), "predict", enabled=False) as b:
            return _predict_in_workers(p, chunks, opts.workers, beam, b)

    return pooled


def _report(counts: StreamCounts, opts: PredictOptions, echo: Callable[[str], None]) -> int:
    """The counts on stderr; exit 2 when lines were given and none was answered (each refused or abstained on)."""
    if counts.refused_total:
        parts = "; ".join(f"{n} {reason}" for reason, n in counts.refused.most_common())
        echo(f"gnnca: skipped {counts.refused_total} of {counts.lines} line(s) (empty output lines): {parts}")
    if counts.blank:
        echo(f"gnnca: {counts.blank} blank or # line(s) gave empty output lines")
    if counts.abstained:
        echo(
            f"gnnca: abstained on {counts.abstained} of {counts.predicted} predicted line(s) (confidence below "
            f"--min-confidence {opts.min_confidence:g}; empty output lines)"
        )
    if counts.fallbacks:
        echo(
            f"gnnca: {counts.fallbacks} of {counts.predicted} line(s) fell back: no balanced hypothesis, "
            'the source is written unchanged ("fallback": true in --json)'
        )
    asked = counts.lines - counts.blank
    if asked and counts.predicted == counts.abstained:  # every line refused or abstained on: nothing answered
        what = "was answered" if counts.abstained else "could be predicted"
        why = f"{counts.refused_total} refused, {counts.abstained} abstained on"
        echo(f"gnnca: error: no line {what} (of {asked} line(s): {why})")
        return 2
    return 0
