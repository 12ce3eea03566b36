"""The Python API: ``load_predictor()`` and ``.predict(lines)`` -> :class:`Prediction` dataclasses.

Example (runs with the bundled models)::

    from gnn_chemalgebra import load_predictor

    predictor = load_predictor(extent="limiting")
    (p,) = predictor.predict("{2}CC(=O)Cl.{3}NCc1ccccc1.{2}CCN(CC)CC")
    p.prediction  # the balanced target line, benchmark format
    p.extent, p.fallback, [(r.mol, r.role) for r in p.roles]

The same parser, decoder and report as ``gnnca predict`` (records are its ``--json`` objects); torch is imported
on the first :func:`load_predictor` call, not on ``import gnn_chemalgebra``. :class:`Prediction` is the one typed
prediction of the package (:class:`gnn_chemalgebra.inference.prediction.Prediction`), the very object the
pipeline's stages complete, with the API's names as properties: ``source``, ``roles``, ``calibrated``,
``calibration_note``, ``in_domain``, ``nearest_training_similarity``, ``top_k`` (line, probability) pairs and
``record`` (its ``--json`` object); ``abstained``, ``error`` and ``blank`` mark a line given back in its place.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .errors import InputError
from .inference.prediction import MoleculeRole, Prediction
from .io import checkpoint_paths

__all__ = ["MoleculeRole", "Prediction", "ReactionPredictor", "load_predictor"]


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
            self.options,
            beam=beam,
            batch_size=batch_size,
            workers=workers,
            top_k=top_k,
            skip_invalid=skip_invalid,
            min_confidence=min_confidence,
            keep_out_of_domain=keep_out_of_domain and min_confidence is not None,
        )
        plan = resolve(opts, domain=True)
        items = _text_items(lines)
        # the path of gnnca predict, with the in-domain fields in every record
        pipeline = build_pipeline(plan, models=self._models)
        stream = pipeline.stream("<input>")
        res = collect(pipeline, stream, text_lines(items, plan.max_chars, "<input>"))
        out = list(res.predictions)  # a line abstained on is withheld: empty prediction, ``abstained`` true
        out += [Prediction.refused(n, items[n - 1], e) for n, e in res.refused]  # numbered as text_lines does
        out += [Prediction.passed_over(n, items[n - 1]) for n in res.blank]
        out.sort(key=lambda p: p.line or 0)
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
