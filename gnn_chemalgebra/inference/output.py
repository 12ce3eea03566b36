"""How ``gnnca predict`` writes its output: each flushed group of outcomes as text or JSON lines, flushed at once
and written whole (a stop signal waits for the group's last line), with refusals, abstentions and fallbacks
noted on stderr as they happen."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TextIO

from ..errors import InputError
from .conformal import text_line as set_text
from .prediction import Prediction
from .report import fallback_reason
from .stop import StopOnSignals
from .stream import LineStream, Outcome

if TYPE_CHECKING:
    from ..progress import Progress
    from .options import PredictOptions


def write_outcomes(
    stream: LineStream,
    groups: Iterable[list[Outcome]],
    opts: PredictOptions,
    out: TextIO,
    echo: Callable[[str], None],
    stop: StopOnSignals,
    progress: Progress,
) -> list[Prediction]:
    """Write each flushed group of ``stream``'s outcomes and flush the output (a signal waits for the group's
    last line), counting the lines on ``progress`` (the run's bar, drawn from here on); refusals, abstentions and
    fallbacks go to stderr as they happen. Returns the predictions written when ``--draw`` keeps them."""
    keep = opts.draw is not None
    records: list[Prediction] = []
    kept = 0  # lines where a chemist's line was asked and the benchmark's by-products were written
    with progress as b:
        for group in groups:
            text = "\n".join(json.dumps(o.json()) if opts.as_json else _text(o, opts) for o in group)
            try:
                with stop.held(len(group)):
                    out.write(text + "\n")
                    out.flush()
            except BrokenPipeError:
                raise
            except OSError as err:  # a full disk, a closed file: one line, not a traceback
                raise InputError(f"cannot write the output: {err.strerror or err}") from None
            for o in group:
                if o.error is not None:
                    echo(f"gnnca: skipped: {o.error}")
                if o.abstained is not None:
                    echo(f"gnnca: abstained: {stream.name}:{o.line}: {o.abstained}")
                elif o.prediction is not None and o.prediction.fallback:
                    echo(f"gnnca: fallback: {stream.name}:{o.line}: {fallback_reason(o.prediction)}")
                elif o.prediction is not None and o.prediction.byproduct_note:
                    kept += 1
                if keep and o.prediction is not None and o.abstained is None:
                    records.append(o.prediction)
            b.update(len(group))
    if kept:
        echo(
            f"gnnca: {kept} line(s) written with the benchmark's by-products: no real by-products close them "
            '("byproduct_convention": "benchmark" and "byproduct_note" in --json)'
        )
    return records


def _text(o: Outcome, opts: PredictOptions) -> str:
    """A text output line: the prediction, with ``--columns`` the top-k lines and their probabilities, tab
    separated (``line<TAB>p<TAB>line2<TAB>p2 ...``), with ``--coverage`` the set (:func:`~.conformal.text_line`)."""
    if o.prediction is not None and o.abstained is None and opts.coverage is not None:
        return set_text(o.prediction.sets)
    if not opts.columns or o.prediction is None or o.abstained is not None:
        return o.text()
    return "\t".join(f"{line}\t{probability:.4f}" for line, probability in o.prediction.top_k)
