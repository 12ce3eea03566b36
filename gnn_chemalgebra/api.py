"""The Python API: ``load_predictor()`` and ``.predict(lines)`` -> :class:`Prediction` dataclasses.

Example (runs with the bundled models)::

    from gnn_chemalgebra import load_predictor

    predictor = load_predictor(extent="limiting")
    (p,) = predictor.predict("{2}CC(=O)Cl.{3}NCc1ccccc1.{2}CCN(CC)CC")
    p.prediction  # the balanced target line, benchmark format
    p.extent, p.fallback, [(r.mol, r.role) for r in p.roles]

The same parser, decoder and report as ``gnnca predict`` (records are its ``--json`` objects); torch is imported
on the first :func:`load_predictor` call, not on ``import gnn_chemalgebra``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import InputError
from .io import checkpoint_paths

if TYPE_CHECKING:
    from .inference.prediction import Prediction as LinePrediction


@dataclass(frozen=True)
class MoleculeRole:
    """One input molecule in the chosen hypothesis: its role and ``nu`` there, the role head's probability of
    that role, and the head's own most likely role (``best_role``), which the chosen hypothesis may overrule."""

    mol: str
    role: str
    nu: int
    confidence: float
    best_role: str


@dataclass(frozen=True)
class Prediction:
    """The prediction for one input line.

    ``prediction`` is the balanced target line (benchmark format; empty when ``abstained``); ``extent`` the extent of
    reaction and ``extent_rule`` the rule that chose it (``bayes`` / ``limiting``); ``confidence`` the probability that
    the line is exactly right, calibrated on validation lines when the checkpoint has a calibration beside it
    (``calibrated``; else the role head's joint probability of the chosen roles, 0.0 for a fallback;
    ``calibration_note`` says why a calibrated checkpoint's number is not called calibrated: decode settings other than
    the fitted ones, or a Type-2 line written under another extent rule); ``in_domain`` whether the reaction resembles
    the training reactions (``None``: no index beside the checkpoint) with ``nearest_training_similarity``; ``top_k``
    the best distinct balanced lines as (line, probability), most probable first; ``fallback`` is true when no
    hypothesis balanced and the source was written unchanged; ``abstained`` when ``confidence`` was below the
    ``min_confidence`` asked; ``error`` why the line was refused (``predict(..., skip_invalid=True)``: the line's
    place is kept, with an empty prediction); ``blank`` marks a blank or ``#`` line, kept in its place with an empty
    prediction, so that the results line up with the input lines. ``record`` is the full ``gnnca predict --json``
    object."""

    line: int
    source: str
    prediction: str
    roles: tuple[MoleculeRole, ...]
    extent: int
    extent_rule: str
    confidence: float
    fallback: bool
    main_product: str | None
    record: Mapping[str, Any] = field(repr=False, compare=False)
    calibrated: bool = False
    calibration_note: str | None = None
    in_domain: bool | None = None
    nearest_training_similarity: float | None = None
    top_k: tuple[tuple[str, float], ...] = ()
    abstained: bool = False
    error: str | None = None
    blank: bool = False

    @classmethod
    def passed_over(cls, line: int, source: str) -> Prediction:
        """A blank or ``#`` line: nothing to predict, kept in its place (as ``gnnca predict`` writes an empty line)."""
        rec = {"line": line, "prediction": "", "blank": True}
        return cls(line, source, "", (), 0, "", 0.0, False, None, rec, blank=True)

    @classmethod
    def refused(cls, line: int, source: str, error: str) -> Prediction:
        """A line ``predict(..., skip_invalid=True)`` refused: no prediction, the reason in ``error``."""
        rec = {"line": line, "prediction": "", "error": error}
        return cls(line, source, "", (), 0, "", 0.0, False, None, rec, error=error)

    @classmethod
    def from_prediction(
        cls, pred: LinePrediction, min_confidence: float | None = None, keep_out_of_domain: bool = False
    ) -> Prediction:
        """A predicted line as the API gives it; with ``min_confidence``, abstained below it, and on a line out of
        domain unless ``keep_out_of_domain`` (as ``gnnca predict --min-confidence``)."""
        abstain = min_confidence is not None and (
            float(pred.confidence or 0.0) < min_confidence or (pred.in_domain is False and not keep_out_of_domain)
        )
        roles = tuple(MoleculeRole(m.mol, m.role, m.nu, m.confidence, m.best_role) for m in pred.molecules)
        trust = pred.trust
        return cls(
            line=pred.line,  # type: ignore[arg-type]  # set by the stream
            source=pred.completed_source if pred.completed_source is not None else pred.source or "",
            prediction="" if abstain else pred.prediction,
            roles=roles,
            extent=pred.extent,  # type: ignore[arg-type]  # None from a sequence model
            extent_rule=pred.extent_rule,  # type: ignore[arg-type]
            confidence=pred.confidence,  # type: ignore[arg-type]  # the trust stage always sets one
            fallback=pred.fallback,
            main_product=pred.main_product,
            record=pred.to_json(),
            calibrated=trust is not None and trust.calibrated,
            calibration_note=None if trust is None else trust.calibration_note,
            in_domain=pred.in_domain,
            nearest_training_similarity=None
            if trust is None or trust.domain is None
            else trust.domain.nearest_training_similarity,
            top_k=tuple((t.prediction, t.probability) for t in pred.top_k),
            abstained=abstain,
        )


class ReactionPredictor:
    """Predicts target lines for reactions; made by :func:`load_predictor`."""

    def __init__(
        self,
        checkpoint: str | Path | None,
        *,
        device: str = "cpu",
        extent: str = "auto",
        edit_checkpoint: str | Path | None = None,
        settings: Iterable[str] = (),
        coef_set: str = "auto",
        byproducts: str = "auto",
    ) -> None:
        from . import lazy_imports

        lazy_imports.install()  # as gnnca does: torch._dynamo loads only if something uses it (faster start)
        from .inference.options import PredictOptions
        from .inference.pipeline import Models
        from .inference.plan import resolve
        from .inference.run import COEF_SETS

        _choice("coef_set", coef_set, COEF_SETS)
        _checkpoint_argument("checkpoint", checkpoint)
        _checkpoint_argument("edit_checkpoint", edit_checkpoint)
        for name, value in (("extent", extent), ("device", device)):
            if not isinstance(value, str):
                raise InputError(f"{name} must be a string, got {value!r} ({type(value).__name__})")
        settings = [settings] if isinstance(settings, str) else list(settings)  # one "decode.k=v" is one item
        bad = [x for x in settings if not isinstance(x, str)]
        if bad:
            raise TypeError(f"settings are 'decode.key=value' strings, got {type(bad[0]).__name__}")
        self.checkpoint = checkpoint
        self.device = device
        self.options = PredictOptions(
            input="-",  # lines given here are free input, as stdin's
            checkpoint=None if checkpoint is None else Path(checkpoint),
            edit_checkpoint=None if edit_checkpoint is None else Path(edit_checkpoint),
            extent=extent,
            byproducts=byproducts,
            settings=settings,
            coef_set=coef_set,
            device=device,
        )
        # an unknown rule, setting or device fails here, not at the first prediction
        plan = resolve(self.options, domain=True)
        self.extent = plan.extent
        # the models of gnnca predict (Predictor.from_checkpoint); every record shows its confidence
        self._models = Models(plan, second_opinion=True)
        if checkpoint is not None:
            self._models.fixed()

    def predict(
        self,
        lines: str | Iterable[str],
        *,
        beam: int = 1,
        batch_size: int = 256,
        workers: int = 1,
        top_k: int = 1,
        min_confidence: float | None = None,
        skip_invalid: bool = False,
        keep_out_of_domain: bool = False,
    ) -> list[Prediction]:
        """Predict reaction lines: ``{k}MOL.{k}MOL`` bags (SMILES or formulas), bare ``MOL.MOL`` or reaction
        SMILES ``reactants>reagents>``; one string may hold several lines. One result per line, in order:
        blank lines and ``#`` comments come back with ``blank`` true and an empty prediction (``Prediction.line`` is
        the 1-based line number); a bad line raises
        :class:`~gnn_chemalgebra.errors.InputError` naming it. Without a checkpoint, the bundled model of the
        input's representation is used. Lines are read, checked against the size limits and predicted exactly as
        ``gnnca predict`` does (the same stream). ``workers > 1`` decodes batches in that many processes (large
        inputs; call it under ``if __name__ == "__main__":`` in a script, as multiprocessing's spawn requires).
        ``top_k``: the K best distinct balanced lines in ``Prediction.top_k``; ``min_confidence``: a prediction
        below it, or out of domain (``in_domain`` false) unless ``keep_out_of_domain``, is returned with
        ``abstained`` true and an empty ``prediction``; ``skip_invalid``: a bad line is
        returned in its place with ``error`` set (as ``gnnca predict --skip-invalid``) instead of raising."""
        from .inference.plan import resolve
        from .inference.predict_command import build_pipeline, collect
        from .inference.source import text_lines

        for name, value in (("beam", beam), ("batch_size", batch_size), ("workers", workers), ("top_k", top_k)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InputError(f"{name} must be an integer of at least 1, got {value!r} ({type(value).__name__})")
        if min_confidence is not None and (
            not isinstance(min_confidence, int | float)
            or isinstance(min_confidence, bool)
            or not 0.0 <= min_confidence <= 1.0
        ):
            raise InputError(f"min_confidence must be a number in [0, 1] or None, got {min_confidence!r}")
        for name, flag in (("skip_invalid", skip_invalid), ("keep_out_of_domain", keep_out_of_domain)):
            if not isinstance(flag, bool):  # a truthy "no" must not keep lines out of domain
                raise InputError(f"{name} must be True or False, got {flag!r}")
        opts = replace(
            self.options, beam=beam, batch_size=batch_size, workers=workers, top_k=top_k, skip_invalid=skip_invalid
        )
        plan = resolve(opts, domain=True)
        items = _text_items(lines)
        # the path of gnnca predict, with the in-domain fields in every record
        pipeline = build_pipeline(plan, models=self._models)
        stream = pipeline.stream("<input>")
        res = collect(pipeline, stream, text_lines(items, plan.max_chars, "<input>"))
        out = [Prediction.from_prediction(p, min_confidence, keep_out_of_domain) for p in res.predictions]
        out += [Prediction.refused(n, items[n - 1], e) for n, e in res.refused]  # numbered as text_lines does
        out += [Prediction.passed_over(n, items[n - 1]) for n in res.blank]
        out.sort(key=lambda p: p.line)
        return out


def _choice(name: str, value: Any, allowed: Iterable[str]) -> None:
    """An argument that must be one of ``allowed``: anything else is one :class:`InputError` naming them."""
    allowed = tuple(allowed)
    if not isinstance(value, str) or value not in allowed:
        raise InputError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")


def _checkpoint_argument(name: str, value: Any) -> None:
    """A checkpoint argument: ``None``, or a path (``a.pt,b.pt``: an ensemble) whose every file exists; anything
    else is one :class:`InputError` naming the argument, at the call that takes it."""
    if value is None:
        return
    if not isinstance(value, str) and not hasattr(value, "__fspath__"):  # a str or an os.PathLike
        raise InputError(f"{name} must be a path (str or os.PathLike) or None, got {value!r} ({type(value).__name__})")
    for part in checkpoint_paths(Path(value)):  # a.pt,b.pt: an ensemble
        if not Path(part).is_file():
            raise InputError(f"no such checkpoint ({name})", path=part)


def _text_items(lines: Any) -> list[str]:
    """The lines of ``lines`` (one string of lines, or an iterable of them); a wrong type is one clear error."""
    if isinstance(lines, str):
        return lines.splitlines()
    if isinstance(lines, bytes | bytearray):
        raise TypeError("lines must be text (str), got bytes: decode them first, e.g. data.decode('utf-8')")
    try:
        items = list(lines)
    except TypeError:
        raise TypeError(f"lines must be a str or an iterable of str, got {type(lines).__name__}") from None
    for i, x in enumerate(items):
        if not isinstance(x, str):
            raise TypeError(f"lines must be a str or an iterable of str; item {i} is {type(x).__name__}")
    return items


def load_predictor(
    checkpoint: str | Path | None = None,
    *,
    device: str = "cpu",
    extent: str = "auto",
    edit_checkpoint: str | Path | None = None,
    settings: Iterable[str] = (),
    coef_set: str = "auto",
    byproducts: str = "auto",
) -> ReactionPredictor:
    """A predictor for reaction lines.

    ``checkpoint``: a GNN checkpoint (default: ``$GNNCA_CHECKPOINT``, else the bundled model matching each
    input's representation). ``extent``: ``auto`` (= ``limiting``: lines given here are read as amounts
    and the limiting reactant is consumed), ``limiting``, or ``bayes`` (the benchmark's rule, for benchmark
    lines). ``settings``: ``decode.key=value`` overrides of the
    checkpoint's decode section, as ``gnnca predict --set``. ``byproducts``: ``auto`` (= ``chemist``: real
    by-products such as water, HCl or a salt; ``benchmark`` with ``extent="bayes"``), ``chemist`` or ``benchmark``
    (the benchmark's leftover chains), as ``gnnca predict --byproducts``."""
    return ReactionPredictor(
        checkpoint,
        device=device,
        extent=extent,
        edit_checkpoint=edit_checkpoint,
        settings=settings,
        coef_set=coef_set,
        byproducts=byproducts,
    )
