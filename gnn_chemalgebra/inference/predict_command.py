"""What ``gnnca predict`` does between its options and its output: check every option and resolve what it implies
once, before any work (:func:`~.plan.resolve`), build the run's stages (:func:`build_pipeline`), load the
checkpoint the user named, open the input, put its lines through the pipeline (:mod:`.pipeline`), write each
outcome as it is ready, and report what was refused, blank or fell back. The CLI only builds
:class:`~.options.PredictOptions`; the Python API and the benchmark use :func:`build_pipeline` and :func:`collect`
(or :func:`predict_lines` with a model already loaded)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..errors import InputError, PredictStopped
from .options import PredictOptions
from .output import write_outcomes
from .pipeline import Models, Pipeline
from .plan import RunPlan, resolve
from .predict_sets import RunTrust
from .prediction import JsonObject, LinePredictor, Prediction
from .report import count_fallbacks
from .source import LineSource, RawLine, text_lines
from .stop import StopOnSignals, StopSignal, reader_gone
from .stream import LineStream, StreamCounts
from .trust_stage import TrustStage


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
    plan = resolve(opts)
    stop = StopOnSignals()
    try:
        with stop:
            return _run(plan, echo, out, after_load, stop)
    except StopSignal as stopped:
        raise PredictStopped(stopped.signum, stop.written) from None
    except BrokenPipeError:
        return reader_gone(out)


def _run(plan: RunPlan, echo: Callable[[str], None], out: TextIO, after_load: Any, stop: StopOnSignals) -> int:
    opts = plan.opts
    if opts.top_k > 1 and not (opts.as_json or opts.columns or opts.coverage is not None):
        k = opts.top_k
        echo(f"gnnca: --top-k {k}: the alternatives are shown with --json or --columns; text lines are the best")
    if opts.beam > 1 and not opts.as_json:
        b = opts.beam
        echo(f"gnnca: --beam {b}: the hypotheses are listed with --json (under 'beam'); text lines are the best")
    pipeline = build_pipeline(plan, after_load=after_load, note=echo)
    pipeline.fixed()  # the checkpoint the user named loads (or fails) before the input is opened
    stream_in, name, fh = _open_input(opts)
    try:
        source = LineSource(stream_in, name, plan.max_chars)
        stream = pipeline.stream(name)
        records = write_outcomes(
            stream, pipeline.outcomes(stream, source, source.ready), opts, out, echo, stop, plan.progress
        )
    finally:
        if fh is not None:
            fh.close()
    if opts.draw is not None and records:
        from .draw import draw_reactions  # RDKit drawing + PIL: only when asked

        with stop.raising():  # a stop removes the temporary file of the image being written
            draw_reactions([p.to_json() for p in records], opts.draw, stream.use or "smiles")  # an output
    pipeline.trust.sets.report(stream.counts.predicted, echo)
    return _report(stream.counts, opts, echo, out_of_domain=pipeline.trust.sets.ood["out of domain"])


def build_pipeline(
    plan: RunPlan,
    *,
    models: Models | None = None,
    after_load: Callable[[], None] | None = None,
    note: Callable[[str], None] | None = None,
) -> Pipeline:
    """The stages of one run of ``plan`` (:mod:`.pipeline`), over ``models`` when given (the API and the
    benchmark keep theirs across runs)."""
    if models is None:
        models = Models(plan, second_opinion=plan.demands.confidence, after_load=after_load)
    trust = TrustStage(plan.demands, RunTrust(plan.opts, plan.conformal), note)
    return Pipeline(plan, models, trust, notice=note)


@dataclass
class PredictResult:
    """Predictions (one per predicted line, with its 1-based ``line``), refused lines' messages, and the count of
    lines written without a balanced hypothesis (``fallback``)."""

    predictions: list[Prediction] = field(default_factory=list)
    repr: str | None = None
    refused: list[tuple[int, str]] = field(default_factory=list)  # (line, located message) of each refused line
    blank: list[int] = field(default_factory=list)  # the blank or ``#`` lines (nothing to predict)

    @property
    def records(self) -> list[JsonObject]:
        """The predictions as ``gnnca predict --json`` writes them (what the benchmark stores and fits on)."""
        return [p.to_json() for p in self.predictions]

    @property
    def invalid(self) -> list[str]:
        """The refused lines' messages."""
        return [e for _, e in self.refused]

    @property
    def fallbacks(self) -> int:
        return count_fallbacks(self.predictions)


def collect(pipeline: Pipeline, stream: LineStream, lines: Iterable[RawLine]) -> PredictResult:
    """Every outcome of ``lines`` at once (the Python API, ``gnnca bench``): predictions, refusals and blank lines
    in input order; a line abstained on (the run's ``min_confidence``, or out of domain) is withheld
    (:meth:`~.prediction.Prediction.withhold`), as ``gnnca predict`` writes it empty.
    The objects alive before (torch, RDKit, the model) are kept out of the garbage collector's full collections
    meanwhile (``gc.freeze``); nothing is computed differently."""
    res = PredictResult()
    with _frozen_heap():
        for group in pipeline.outcomes(stream, lines):
            for o in group:
                if o.prediction is not None:
                    if o.abstained is not None:
                        o.prediction.withhold()
                    res.predictions.append(o.prediction)
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


def predict_lines(
    lines: Sequence[str],
    predictor: LinePredictor,
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
    plan = resolve(opts, domain=True)
    trust = TrustStage(plan.demands, RunTrust(opts))
    pipeline = Pipeline(plan, Models.of_loaded(predictor, plan), trust)
    stream = pipeline.stream(source_name)
    return collect(pipeline, stream, text_lines(list(lines), plan.max_chars, source_name))


def _report(counts: StreamCounts, opts: PredictOptions, echo: Callable[[str], None], out_of_domain: int = 0) -> int:
    """The counts on stderr; exit 2 when lines were given and none was answered (each refused or abstained on,
    below ``--min-confidence`` or as one of the ``out_of_domain`` lines)."""
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
    abstained = counts.abstained + out_of_domain
    if asked and counts.predicted == abstained:  # every line refused or abstained on: nothing answered
        what = "was answered" if abstained else "could be predicted"
        why = f"{counts.refused_total} refused, {abstained} abstained on"
        echo(f"gnnca: error: no line {what} (of {asked} line(s): {why})")
        return 2
    return 0
