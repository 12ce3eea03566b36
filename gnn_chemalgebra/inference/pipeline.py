"""The prediction path, one stage after the other, each handed the typed values of the one before::

    plan          plan.py         resolve: every option checked and what it implies resolved, once -> RunPlan
    read          source.py       a file or pipe (LineSource), or lines in memory (text_lines) -> RawLine
    parse, check  stream.py       LineStream: representation, size limits, refusals, order -> Batch of ReactionInput
    featurise     run.py          to_example with the model's representation and line type -> BagExample
    model, decode predictor.py    a LinePredictor (GNN, ensemble, GNN pair, Transformer) -> Prediction
    trust         trust_stage.py  TrustStage: calibrated confidence, in-domain fields, top_k
    rules         rules_stage.py  a user's line an explicit rule covers is written by the rule
    sets          predict_sets.py conformal sets of the model's lines (--coverage; a rule's line gets none)
    write         output.py       text, --columns, --coverage or --json lines (Prediction.to_json at the edge)

:class:`Pipeline` drives them: the stream gives out a batch, the pipeline predicts it and hands the outcomes
back (:meth:`~.stream.LineStream.fill`); nothing below calls up. Every stage is handed the run's
:class:`~.plan.RunPlan` (what each run computes is its :class:`~.options.Demands`, in the plan) and reaches for no
option's helper mid-run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from ..chem.bag import format_bag
from ..data.dataset import BagExample
from ..errors import InputError
from .prediction import LinePredictor, Prediction
from .rules_stage import rule_predictions
from .run import default_checkpoint, line_vtype, to_example
from .source import RawLine
from .stream import Batch, LineStream, Outcome, StreamSpec
from .trust_stage import TrustStage

if TYPE_CHECKING:
    from .plan import RunPlan


class Models:
    """The model of each representation, loaded on first use: the checkpoint the user named, or the bundled one
    (:meth:`~.predictor.Predictor.from_checkpoint`); or one already loaded (:meth:`of_loaded`)."""

    def __init__(
        self, plan: RunPlan, *, second_opinion: bool = False, after_load: Callable[[], None] | None = None
    ) -> None:
        self.plan, self.opts = plan, plan.opts
        self.rules = plan.rules  # a user's lines
        self.second_opinion, self.after_load = second_opinion, after_load
        self._loaded: dict[str, LinePredictor] = {}
        self._by_repr: dict[str, LinePredictor] = {}
        self._given: LinePredictor | None = None

    @classmethod
    def of_loaded(cls, predictor: LinePredictor, plan: RunPlan) -> Models:
        """A model already loaded, for every line (:func:`~.predict_command.predict_lines`)."""
        models = cls(plan)
        models._given = predictor
        models.rules = False  # the model's own lines (the benchmark stages, tests of a model)
        return models

    def load(self, path: str) -> LinePredictor:
        from .predictor import Predictor, PredictorOptions

        if path not in self._loaded:
            plan = self.plan
            edit = str(self.opts.edit_checkpoint) if self.opts.edit_checkpoint is not None else None
            overrides = tuple(self.opts.settings)
            options = PredictorOptions(edit, plan.extent, overrides=overrides, byproducts=plan.byproducts)
            model = Predictor.from_checkpoint(path, plan.device, options)
            if isinstance(model, Predictor):
                model.second_opinion = self._wants_second_opinion(model)
            self._loaded[path] = model
            if self.after_load is not None:
                self.after_load()
                self.after_load = None
        return self._loaded[path]

    def _wants_second_opinion(self, model: LinePredictor) -> bool:
        """Whether a formula pair's Type-1 lines get a second opinion: where the confidence is used
        (:attr:`~.options.Demands.confidence`) and the calibration beside the checkpoint has a model that reads
        it (else the second pass would be wasted)."""
        from ..trust.calibrators import SECOND_OPINION
        from .trust_stage import trust_for

        if not self.second_opinion or model.type1 is None:
            return False
        trust = trust_for(model)
        return trust is not None and trust.calibrator is not None and SECOND_OPINION in trust.calibrator.top

    def fixed(self) -> LinePredictor | None:
        """The checkpoint the user named ($GNNCA_CHECKPOINT included, checked by the plan), loaded; ``None`` for the
        bundled ones."""
        if self._given is not None:
            return self._given
        return None if self.plan.checkpoint is None else self.load(self.plan.checkpoint)

    def for_repr(self, repr: str) -> LinePredictor:
        """The model for lines in ``repr`` (resolved once per representation)."""
        got = self._given or self._by_repr.get(repr)
        if got is not None:
            return got
        got = self.fixed()
        if got is None:
            path = default_checkpoint(repr, self.plan.byproducts)
            if not path.is_file():
                raise InputError("the bundled checkpoint is missing (reinstall the package)", path=str(path))
            got = self.load(str(path))
        self._by_repr[repr] = got
        return got


class Pipeline:
    """One run's stages over its :class:`Models` (see the module doc); ``notice``: where the one-off notes of
    the run go (stderr for ``gnnca predict``; ``None``: nowhere)."""

    def __init__(
        self, plan: RunPlan, models: Models, trust: TrustStage, *, notice: Callable[[str], None] | None = None
    ) -> None:
        self.plan, self.opts, self.demands = plan, plan.opts, plan.demands
        self.models, self.trust, self.notice = models, trust, notice
        self._unequal_notice = plan.limiting_notice and notice is not None  # said once, at the first such line

    def model_for(self, repr: str) -> LinePredictor:
        """The model of ``repr``, loaded, and checked against what the run asks of it (a conformal fit)."""
        model = self.models.for_repr(repr)
        self.trust.check_model(model)
        return model

    def fixed(self) -> LinePredictor | None:
        model = self.models.fixed()
        if model is not None:
            self.trust.check_model(model)
        return model

    def stream(self, name: str, min_confidence: float | None = None) -> LineStream:
        """A stream of lines in the checkpoint's representation (the user's checkpoint fixes it; else ``--repr``,
        else the first line that reads one way), checked against the size limits."""
        opts = self.opts
        fixed = self.fixed()
        fixed_repr, fixed_by = None, ""
        if fixed is not None:
            fixed_repr, fixed_by = fixed.repr, "the checkpoint"
            if opts.repr not in ("auto", fixed.repr):
                raise InputError(f"--repr {opts.repr}, but the checkpoint reads {fixed.repr}")
        elif opts.repr != "auto":
            fixed_repr, fixed_by = opts.repr, f"--repr {opts.repr}"
        spec = StreamSpec(
            fixed_repr=fixed_repr,
            fixed_by=fixed_by,
            source_name=name,
            skip_invalid=opts.skip_invalid,
            limits=self.plan.limits,
            batch_size=opts.batch_size * opts.workers,
            min_confidence=opts.min_confidence if min_confidence is None else min_confidence,
        )
        return LineStream(spec)

    def outcomes(
        self, stream: LineStream, lines: Iterable[RawLine], ready: Callable[[], bool] = lambda: True
    ) -> Iterable[list[Outcome]]:
        """Every line's outcome, in input order, a list per flush: each batch the stream gives out is featurised,
        predicted and put through the trust, rules and sets stages, then handed back; a line out of domain is
        abstained on where the run asks it (:meth:`~.predict_sets.RunTrust.outcomes`)."""
        return self.trust.sets.outcomes(self._steps(stream, lines, ready))

    def _steps(
        self, stream: LineStream, lines: Iterable[RawLine], ready: Callable[[], bool]
    ) -> Iterator[list[Outcome]]:
        for step in stream.steps(lines, ready):
            if isinstance(step, Batch):
                stream.fill(step, self.predict(step))
            else:
                yield step

    def predict(self, batch: Batch) -> list[Prediction | InputError]:
        """One batch through featurise -> model and decode -> trust -> rules -> sets: a prediction, or the refusal
        of a line the model cannot take (its representation; a model that cannot be loaded refuses every line)."""
        try:
            model = self.model_for(batch.repr)
        except InputError as err:
            return [err] * len(batch.items)
        slots: list[InputError | None] = []  # a line's refusal, or None: predicted
        examples: list[BagExample] = []
        for item in batch.items:
            inp = item.reading
            try:
                vtype = line_vtype(inp.terms, self.opts.line_type, model.vtype)
                ex = to_example(inp, model.repr, vtype, self.opts.coef_set)
            except InputError as err:
                slots.append(err)
                continue
            self._note_unequal(ex)
            examples.append(ex)
            slots.append(None)
        done = iter(zip(examples, self._model_pass(model, examples), strict=True))
        results: list[Prediction | InputError] = []
        for item, refused in zip(batch.items, slots, strict=True):
            if refused is not None:
                results.append(refused)
                continue
            ex, pred = next(done)
            results.append(pred.placed(item.out.line, format_bag(ex.terms), ex.cset, ex.vtype))
        preds = [r for r in results if isinstance(r, Prediction)]
        self.trust.annotate(model, preds)
        if self.models.rules:  # a user's line that an explicit rule covers is written by the rule
            rule_predictions(preds, model.repr)
        self.trust.add_sets(model, preds)  # the model's lines only: a rule's line has no conformal guarantee
        return results

    def _note_unequal(self, ex: BagExample) -> None:
        if self._unequal_notice and len({t.coef for t in ex.terms}) > 1:
            self._unequal_notice = False
            if self.notice is not None:
                self.notice(
                    "gnnca: --extent auto: unequal coefficients read as amounts (limiting reactant consumed); "
                    "pass --extent bayes for benchmark lines"
                )

    def _model_pass(self, model: LinePredictor, examples: list[BagExample]) -> list[Prediction]:
        """Examples -> predictions: in this process, or split over ``--workers`` processes (input order kept).
        The beam is at least ``--top-k`` wide (the alternatives come from it)."""
        if not examples:
            return []
        opts, beam = self.opts, self.demands.beam
        chunks = [examples[s : s + opts.batch_size] for s in range(0, len(examples), opts.batch_size)]
        if opts.workers <= 1 or len(chunks) == 1:
            return model.predict(examples, batch_size=opts.batch_size, beam=beam)
        from ..progress import bar
        from .run import _predict_in_workers

        with bar(len(examples), "predict", enabled=False) as b:
            return _predict_in_workers(model, chunks, opts.workers, beam, b)
