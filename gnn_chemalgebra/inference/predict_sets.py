"""What ``gnnca predict --coverage`` and ``--min-confidence`` (without ``--keep-out-of-domain``) add to a run:
conformal prediction sets written into each record, and out-of-domain lines abstained on.

The conformal sidecar is the file of ``--conformal``, else ``<checkpoint>.conformal.json`` beside the checkpoint
(:func:`~.conformal.sidecar_path`); it must hold a fit for the very checkpoint (its sha256) and calibration sidecar
the run uses, else the run stops with one line before any line is predicted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError
from ..io import checkpoint_paths
from .conformal import ConformalTable, ModelFit, annotate_sets, check_coverage, sidecar_path
from .options import PredictOptions
from .prediction import LinePredictor, Prediction, SetFields

RULE_NO_SET = "written by a rule: no conformal set (the sets are fitted on the model's own lines)"

if TYPE_CHECKING:
    from .stream import Outcome


def check_trust_options(opts: PredictOptions) -> ConformalTable | None:
    """``--coverage``, ``--conformal`` and ``--keep-out-of-domain`` checked before any work: one
    :class:`InputError` line each. Returns the ``--conformal`` sidecar, read (``None``: none named)."""
    if opts.keep_out_of_domain and opts.min_confidence is None:
        raise InputError("--keep-out-of-domain goes with --min-confidence (without it no line is abstained on)")
    coverage, conformal, columns = opts.coverage, opts.conformal, opts.columns
    if coverage is None:
        if conformal is not None:
            raise InputError("--conformal names the sets' sidecar: it goes with --coverage")
        return None
    if not 0.0 < coverage < 1.0:
        raise InputError(f"--coverage must lie strictly between 0 and 1, got {coverage}")
    if columns:
        raise InputError("--columns and --coverage are two text formats: pass one of them")
    return None if conformal is None else ConformalTable.load(conformal)  # missing or malformed: one line now


class ConformalSets:
    """The sets of one run: the sidecar (given or found beside each checkpoint), the fit of each predictor's
    checkpoint, and a count of the lines that got no set (by reason)."""

    def __init__(self, coverage: float, k: int, path: Path | None = None, table: ConformalTable | None = None) -> None:
        self.coverage, self.k, self.path, self.table = coverage, k, path, table  # the table read from ``path``
        self._fits: dict[int, tuple[ModelFit, str]] = {}
        self.no_set: Counter = Counter()

    def fit_for(self, predictor: LinePredictor) -> tuple[ModelFit, str]:
        """The fit (and score) for a predictor; raises one line when there is none that matches it."""
        key = id(predictor)
        if key not in self._fits:
            self._fits[key] = self._resolve(predictor)
        return self._fits[key]

    def _resolve(self, predictor: LinePredictor) -> tuple[ModelFit, str]:
        from ..io import sha256_cached
        from ..trust.sidecar import sidecar_paths
        from .trust_stage import trust_for

        src = predictor.source
        parts = [] if src is None else checkpoint_paths(str(src.checkpoint))
        if len(parts) != 1:
            raise InputError("--coverage needs one checkpoint: conformal sets are fitted per model, not ensembles")
        ckpt = Path(parts[0])
        path = self.path or sidecar_path(ckpt)
        if self.table is None and not path.is_file():
            raise InputError(
                f"no conformal sidecar beside the checkpoint ({path.name}): pass --conformal FILE "
                "(fit one: gnnca bench conformal)",
                path=str(ckpt),
            )
        table = self.table or ConformalTable.load(path)
        fit = table.for_checkpoint(sha256_cached(ckpt))
        if fit is None:
            names = ", ".join(m.checkpoint for m in table.models) or "none"
            raise InputError(
                f"no conformal fit for {ckpt.name} as it is now (fitted for: {names}; its sha256 differs or it is "
                "not listed): fit again with gnnca bench conformal",
                path=str(path),
            )
        trust = trust_for(predictor)
        js = sidecar_paths(ckpt)[0]
        now = None if trust is None or not js.is_file() else sha256_cached(js)
        if fit.trust_sha256 != now:
            raise InputError(
                f"the conformal fit of {ckpt.name} read other confidences than now (its calibration sidecar "
                "changed, or is missing): fit again with gnnca bench conformal",
                path=str(path),
            )
        check_coverage(self.coverage, fit)
        return fit, table.score

    def annotate(self, predictor: LinePredictor, preds: list[Prediction]) -> None:
        """The set of each prediction (its ``sets``), from its ``top_k`` alternatives; a line a rule wrote gets
        none (:data:`RULE_NO_SET`): its confidence is the rule's, not the model's that the set is fitted on.
        Every line without a set is counted by its note, as its record says."""
        fit, score = self.fit_for(predictor)
        model_lines = [p for p in preds if not p.by_rule]
        records = [p.to_json() for p in model_lines]
        annotate_sets(records, fit, self.coverage, self.k, score)
        for p, r in zip(model_lines, records, strict=True):
            p.sets = SetFields.of_record(r)
        for p in preds:
            if p.by_rule:
                p.sets = SetFields(None, RULE_NO_SET)
        self.no_set.update(p.sets.note for p in preds if p.sets is not None and p.sets.members is None)

    def report(self, echo: Callable[[str], None]) -> None:
        for note, n in self.no_set.most_common():
            echo(f"gnnca: {n} line(s) have no prediction set (NA in text output, null in --json): {note}")


def abstain_out_of_domain(groups: Iterable[list[Outcome]], counter: Counter) -> Iterator[list[Outcome]]:
    """The stream's outcome groups, with every predicted line the in-domain index marks out of domain abstained on
    (``abstained``: the reason, from ``domain_notes``); ``counter`` counts them. Lines without an index
    (``in_domain`` null) are kept."""
    for group in groups:
        for o in group:
            pred = o.prediction
            if pred is None or o.abstained is not None or pred.in_domain is not False:
                continue
            notes = "; ".join(pred.domain_notes) or "unlike the training reactions"
            o.abstained = f"out of domain ({notes}); --keep-out-of-domain keeps such lines"
            counter["out of domain"] += 1
        yield group


class RunTrust:
    """What a ``gnnca predict`` run adds to the trust fields: the conformal sets (``--coverage``) and the
    abstention on lines out of domain (``--min-confidence`` without ``--keep-out-of-domain``), with their counts."""

    def __init__(self, opts: PredictOptions, table: ConformalTable | None = None) -> None:
        """``table``: the ``--conformal`` sidecar, read once (:func:`check_trust_options`)."""
        self.sets = None if opts.coverage is None else ConformalSets(opts.coverage, opts.top_k, opts.conformal, table)
        self.abstain_ood = opts.min_confidence is not None and not opts.keep_out_of_domain
        self.ood: Counter = Counter()

    def check_model(self, predictor: LinePredictor) -> None:
        """Raise one line now when the sets have no fit for a predictor just loaded."""
        if self.sets is not None:
            self.sets.fit_for(predictor)

    def annotate(self, predictor: LinePredictor, preds: list[Prediction]) -> None:
        if self.sets is not None:
            self.sets.annotate(predictor, preds)

    def outcomes(self, groups: Iterable[list[Outcome]]) -> Iterable[list[Outcome]]:
        return abstain_out_of_domain(groups, self.ood) if self.abstain_ood else groups

    def report(self, predicted: int, echo: Callable[[str], None]) -> None:
        """The run's counts on stderr: lines without a prediction set, lines abstained on as out of domain."""
        if self.sets is not None:
            self.sets.report(echo)
        if self.ood:
            echo(
                f"gnnca: abstained on {self.ood['out of domain']} of {predicted} predicted line(s) out of domain "
                "(empty output lines; --keep-out-of-domain keeps them)"
            )
