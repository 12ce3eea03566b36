"""The GNN predictor: a model runner, a decoder and a report behind one object.

:class:`~.runner.ModelRunner` turns a checkpoint into network outputs, :class:`~.decoder.Decoder` turns those into
ranked, exactly balanced hypotheses, and :mod:`.report` writes the chosen one as a JSON record (and text line).
This class only wires them and batches examples; its decode settings come from the checkpoint's ``decode``
section (:class:`~gnn_chemalgebra.config.DecodeConfig`), so a checkpoint predicts as it was validated.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ..checkpoint import load_checkpoint
from ..chem.bag import parse_bag
from ..config import DecodeConfig, decode_overrides
from ..data.dataset import BagExample, ExtraVocab
from ..data.featurize import Featurizer
from ..errors import InputError
from ..io import checkpoint_paths
from ..kinds import KINDS, kind_of_checkpoint
from .byproduct_convention import CHEMIST
from .decoder import Decoder, LineOutputs, extent_rule_for, kbest_assignments
from .formula_check import FormulaReading, agreement, formula_example
from .hypotheses import ExampleOutputs
from .prediction import FormulaCheck, Prediction, SecondOpinion
from .report import build_record
from .runner import ModelRunner, file_beside, load_edit_model, load_model

__all__ = ["Predictor", "PredictorOptions", "PredictorSpec", "kbest_assignments", "load_edit_model"]


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while one chunk is predicted, back on (if it was) after it.

    A chunk allocates many short-lived small objects (the decoders' lists, tuples and dicts, freed by reference
    counting); with the collector on, their churn triggers a few hundred collections per 200 SMILES lines
    (~3% of the CPU) that find almost nothing. Cycles made by the chunk are collected after it. Nothing
    computed depends on when the collector runs."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


@dataclass(frozen=True)
class PredictorOptions:
    """How a checkpoint is read as a predictor: the bond-edit model of a SMILES checkpoint (``None``: the paired
    one, ``$GNNCA_EDIT_CHECKPOINT``, the bundled one, or ``runs/edits_cpu/best.pt``), the extent rule, the decode
    settings (``settings`` replaces the checkpoint's ``decode`` section whole; ``overrides`` are
    ``decode.key=value`` items applied on top, as ``gnnca predict --set``); ``type1_settings`` replaces the Type-1
    model's whole, as :meth:`Predictor.spec` records them (a spawned worker must not lose the ``--set`` items);
    ``second_opinion``: with a Type-1 model, this model also writes each Type-1 line (:meth:`Predictor.predict`);
    ``byproducts``: the by-product convention of the written lines (``benchmark`` or ``chemist``, see
    :mod:`.byproduct_convention`)."""

    edit_checkpoint: str | None = None
    extent: str = "auto"
    settings: DecodeConfig | None = None
    overrides: tuple[str, ...] = ()
    type1_settings: DecodeConfig | None = None
    second_opinion: bool = False
    byproducts: str = "benchmark"


@dataclass(frozen=True)
class PredictorSpec:
    """How to load a predictor again (another process: ``gnnca predict --workers``): checkpoint, device and
    options; picklable, unlike a loaded model."""

    checkpoint: str
    device: str = "cpu"
    options: PredictorOptions = PredictorOptions()

    @property
    def edit_checkpoint(self) -> str | None:
        return self.options.edit_checkpoint

    def load(self) -> Predictor:
        return Predictor.from_checkpoint(self.checkpoint, self.device, self.options)


class Predictor:
    """Examples in, one JSON-able record per example out (``record["prediction"]`` is the target line).

    :meth:`from_checkpoint` is the way in from a checkpoint (``gnnca predict``, the Python API, ``gnnca bench``,
    the ``--workers`` processes); the constructor takes a network already in memory (the trainer's validation),
    :meth:`build` an untrained one (tests). The runner's and decoder's parts a caller reads are attributes here;
    everything else is reached on :attr:`runner` and :attr:`decoder` directly."""

    def __init__(
        self,
        model: torch.nn.Module,
        feat: Featurizer,
        vocab: ExtraVocab,
        vtype: int,
        device: torch.device | str = "cpu",
        edit: Any = None,
        settings: DecodeConfig | None = None,
        extent: str = "auto",
        byproducts: str = "benchmark",
    ) -> None:
        self.runner = ModelRunner(model, feat, vocab, vtype, device)
        settings = dataclasses.replace(settings or DecodeConfig())
        self.decoder = Decoder(feat, vocab, settings, edit=edit, extent=extent, byproducts=byproducts)
        self.source: PredictorSpec | None = None  # set when loaded from a checkpoint
        self.type1: Predictor | None = None  # reads the Type-1 lines when the checkpoint names one (decode.type1_model)
        self.saved_settings: DecodeConfig | None = None  # the decode section of the checkpoint it was loaded from
        self.second_opinion = False  # with a Type-1 model: this model writes the Type-1 lines too (see predict)
        self.formula_reader: Predictor | None = None  # a SMILES model's second reading (decode.formula_check)

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_checkpoint(
        cls,
        path: str | Path,
        device: str | torch.device = "cpu",
        options: PredictorOptions | None = None,
    ) -> Any:
        """The predictor of a checkpoint, by its kind (:func:`gnn_chemalgebra.kinds.kind_of_checkpoint`): a GNN
        (``a.pt,b.pt``: an ensemble) as :meth:`from_loaded` reads it; a Transformer (the sequence baseline) as a
        :class:`~.transformer.TransformerPredictor` with the same ``predict`` contract; every kind through its
        registry entry's predictor factory. A kind that reads no lines (the bond-edit model) is one clear line."""
        options = options or PredictorOptions()
        paths = checkpoint_paths(str(path))
        first = load_checkpoint(paths[0], map_location="cpu", require=())
        kind = kind_of_checkpoint(first, paths[0])
        if not kind.reads_lines:
            readers = ", ".join(k.name for k in KINDS.values() if k.reads_lines)
            why = f"{kind.name!r} checkpoint, {kind.summary}, predicts no lines itself (pass it as the edit model)"
            raise InputError(f"the {why}; the line predictors are {readers}", path=paths[0])
        return kind.load_predictor()(first, str(path), device, options)

    @classmethod
    def from_loaded(
        cls,
        first: dict[str, Any],
        path: str,
        device: str | torch.device = "cpu",
        options: PredictorOptions | None = None,
        *,
        route: bool = True,
    ) -> Predictor:
        """The GNN predictor of a checkpoint (``path``; ``a.pt,b.pt``: an ensemble) whose first file's entries are
        ``first``, with the decode settings saved in it as ``options`` amend them (:class:`PredictorOptions`).
        Settings that name a Type-1 model (``decode.type1_model``) load it too and hand it the Type-1 lines,
        unless ``route`` is false. The registry's predictor factory for ``gnn`` and ``naive``."""
        options = options or PredictorOptions()
        lm = load_model(path, device, options.edit_checkpoint, first)
        settings = decode_overrides(options.settings or lm.settings, options.overrides)
        r = lm.runner
        pred = cls(r.model, r.feat, r.vocab, r.vtype, r.device, lm.edit, settings, options.extent, options.byproducts)
        if options.edit_checkpoint is None and lm.edit_path is not None:  # the one the checkpoint names: workers
            options = dataclasses.replace(options, edit_checkpoint=lm.edit_path)  # and the trust stage read it
        pred.source = PredictorSpec(str(path), str(r.device), options)
        pred.saved_settings = dataclasses.replace(lm.settings)  # what a calibration without its own record assumes
        pred.second_opinion = options.second_opinion
        if route and settings.type1_model:
            pred.type1 = cls._type1_model(checkpoint_paths(path)[0], settings.type1_model, r.device, options,
                                          pred.repr)  # fmt: skip
        if settings.formula_check and pred.repr == "smiles":
            pred.formula_reader = cls._formula_model(checkpoint_paths(path)[0], settings.formula_check, r.device,
                                                     options)  # fmt: skip
        return pred

    @classmethod
    def _formula_model(cls, main: str, name: str, device: torch.device, options: PredictorOptions) -> Predictor:
        """The formula model named by ``decode.formula_check`` (relative to the main checkpoint's folder), with its
        own saved decode settings: it reads a chemist's SMILES lines a second time, written in formulas."""
        path = file_beside(main, name, "formula model", "decode.formula_check")
        first = load_checkpoint(path, map_location="cpu", require=())
        if kind_of_checkpoint(first, str(path)).load_predictor() != cls.from_loaded:
            raise InputError("decode.formula_check must be a GNN checkpoint reading formulas", path=str(path))
        sub = PredictorOptions(extent=options.extent, byproducts=options.byproducts)
        reader = cls.from_loaded(first, str(path), device, sub, route=False)
        if reader.repr != "formula":
            raise InputError("decode.formula_check must be a GNN checkpoint reading formulas", path=str(path))
        return reader

    @classmethod
    def _type1_model(
        cls, main: str, name: str, device: torch.device, options: PredictorOptions, repr: str
    ) -> Predictor:
        """The predictor of the Type-1 lines named by ``decode.type1_model`` (relative to the main checkpoint's
        folder), with its own saved decode settings and the user's ``--set`` overrides; it routes no further."""
        path = file_beside(main, name, "Type-1 model", "decode.type1_model")
        overrides = (
            ()
            if options.type1_settings is not None
            else tuple(  # a spec's settings already hold them
                o for o in options.overrides if o.split("=", 1)[0].strip() != "decode.type1_model"
            )
        )
        sub = PredictorOptions(
            options.edit_checkpoint, options.extent, options.type1_settings, overrides, byproducts=options.byproducts
        )
        first = load_checkpoint(path, map_location="cpu", require=())
        if kind_of_checkpoint(first, str(path)).load_predictor() != cls.from_loaded:
            raise InputError(f"decode.type1_model must be a GNN checkpoint reading {repr}", path=str(path))
        t1 = cls.from_loaded(first, str(path), device, sub, route=False)
        if t1.repr != repr:
            raise InputError(f"decode.type1_model must be a GNN checkpoint reading {repr}", path=str(path))
        if t1.settings.type1_model:  # its Type-1 lines belong elsewhere: which model reads them is ambiguous
            raise InputError(
                f"decode.type1_model names a checkpoint that itself names a Type-1 model "
                f"({t1.settings.type1_model}): one level only",
                path=str(path),
            )
        return t1

    def file_names(self) -> str | None:
        """The checkpoint file this predictor was loaded from, as records name it (an ensemble, ``a.pt,b.pt``,
        writes its lines together: every member's name); ``None`` for one built in memory."""
        if self.source is None:
            return None
        return ",".join(Path(p).name for p in checkpoint_paths(self.source.checkpoint))

    def spec(self) -> PredictorSpec:
        """This predictor as a :class:`PredictorSpec` (its current extent rule and decode settings, and its Type-1
        model's)."""
        if self.source is None:
            raise InputError("this predictor was built in memory, not loaded from a checkpoint: no workers")
        t1 = None if self.type1 is None else dataclasses.replace(self.type1.settings)
        now = dataclasses.replace(
            self.source.options,
            extent=self.extent,
            settings=dataclasses.replace(self.settings),
            overrides=(),
            type1_settings=t1,
            second_opinion=self.second_opinion,
            byproducts=self.byproducts,
        )
        return dataclasses.replace(self.source, options=now)

    @classmethod
    def build(cls, cfg_model: dict, feat: Featurizer, vocab: ExtraVocab, vtype: int) -> Predictor:
        """An untrained network of the given model settings (tests, smoke runs)."""
        r = ModelRunner.build(cfg_model, feat, vocab, vtype)
        return cls(r.model, feat, vocab, vtype)

    # ----------------------------------------------------------------- the parts callers read
    model = property(lambda self: self.runner.model)
    feat = property(lambda self: self.runner.feat)
    vocab = property(lambda self: self.runner.vocab)
    vtype = property(lambda self: self.runner.vtype)
    device = property(lambda self: self.runner.device)
    repr = property(lambda self: self.runner.repr)
    naive = property(lambda self: self.runner.naive)

    @property
    def settings(self) -> DecodeConfig:
        """The decoder's settings (``decode`` section); change one with ``predictor.settings.name = value``."""
        return self.decoder.settings

    @property
    def edit(self) -> Any:
        return self.decoder.edit

    @edit.setter
    def edit(self, value: Any) -> None:
        self.decoder.edit = value if self.repr == "smiles" else None

    @property
    def extent(self) -> str:
        return self.decoder.extent

    @extent.setter
    def extent(self, value: str) -> None:
        extent_rule_for([], value)
        self.decoder.extent = value
        if self.type1 is not None:
            self.type1.extent = value

    @property
    def byproducts(self) -> str:
        """The by-product convention of the written lines: ``benchmark`` or ``chemist``."""
        return self.decoder.byproducts

    @byproducts.setter
    def byproducts(self, value: str) -> None:
        from .byproduct_convention import check_convention

        if check_convention(value) == "auto":
            raise InputError("a predictor writes one by-product convention: benchmark or chemist, not auto")
        self.decoder.byproducts = value
        if self.type1 is not None:
            self.type1.byproducts = value

    def reader(self, vtype: int) -> Predictor:
        """The model that reads lines of ``vtype``: the Type-1 model for Type 1 when the checkpoint names one, else
        this one (analyses of one model's heads and settings must use the model that wrote the lines)."""
        return self.type1 if vtype == 1 and self.type1 is not None else self

    # ----------------------------------------------------------------- running
    def decode_one(
        self,
        ex: BagExample,
        r: ExampleOutputs | LineOutputs,
        beam: int = 1,
        check: FormulaReading | None = None,
    ) -> Prediction:
        """The prediction of one example from its network outputs (one example's tensors or :class:`LineOutputs`);
        ``check``: the formula model's reading of a chemist's line (:mod:`.formula_check`), recorded in
        ``formula_check``."""
        lo = r if isinstance(r, LineOutputs) else self.decoder.line_outputs(r)
        test = None if check is None else check.agrees
        res = self.decoder.decode(ex, lo, beam, self.runner.extent_scorer_for(lo.bag), test)
        rec = build_record(ex, lo, res, self.vocab, self.naive)
        if check is not None and res.mode != "given" and not res.fallback and res.convention == CHEMIST:
            rec.formula_check = FormulaCheck(check.line, check.agrees(res.chosen.decoded))
        return rec

    def _outputs(self, examples: Sequence[BagExample], data: Sequence[Any] | None = None) -> list[LineOutputs]:
        """Network outputs per example, as numbers: from already featurised bags ``data``, else featurised and
        batched here in one go."""
        out = self.runner.run(examples) if data is None else self.runner.run_data(data)
        lines = self.decoder.batch_line_outputs(out)
        self.decoder.warm_edit_cache(examples, lines)
        return lines

    def predict(self, examples: Sequence[BagExample], batch_size: int = 64, beam: int = 1) -> list[Prediction]:
        """One :class:`~.prediction.Prediction` per example (see :func:`.report.build_record`); ``fallback``
        marks lines written without a balanced hypothesis (count them with
        :func:`.report.count_fallbacks`). With a Type-1 model
        (``decode.type1_model``) the Type-1 examples go to it, the others to this model, and each record names
        the checkpoint file that wrote it (``model``). With ``second_opinion`` set, this model writes the Type-1
        lines as well, and each Type-1 record gets ``second_opinion``: that line, the file that wrote it and
        whether it is the line written (the calibration reads the disagreement; it costs a second pass over the
        Type-1 lines)."""
        if self.type1 is None:
            return self._predict_own(examples, batch_size, beam)
        parts = {vt: [i for i, ex in enumerate(examples) if (ex.vtype == 1) == (vt == 1)] for vt in (1, 2)}
        results: list[Prediction | None] = [None] * len(examples)
        for vt, idx in parts.items():
            if not idx:
                continue
            model = self.reader(vt)
            recs = model._predict_own([examples[i] for i in idx], batch_size, beam)
            name = model.file_names()
            for i, rec in zip(idx, recs, strict=True):
                rec.model = name
                results[i] = rec
        if self.second_opinion and parts[1]:
            own = self._predict_own([examples[i] for i in parts[1]], batch_size, 1)
            name = self.file_names()
            for i, other in zip(parts[1], own, strict=True):
                written = results[i]
                assert written is not None
                written.second_opinion = SecondOpinion(name, other.prediction, other.prediction == written.prediction)
        return [r for r in results if r is not None]

    def _predict_own(self, examples: Sequence[BagExample], batch_size: int, beam: int) -> list[Prediction]:
        """:meth:`predict` with this model alone."""
        results: list[Prediction] = []
        for s in range(0, len(examples), batch_size):
            chunk = examples[s : s + batch_size]
            checks = self._formula_checks(chunk)
            with _collector_paused():
                outs = self._outputs(chunk)
                results += [self.decode_one(ex, lo, beam, c) for ex, lo, c in zip(chunk, outs, checks, strict=True)]
        return results

    def _formula_checks(self, chunk: Sequence[BagExample]) -> list[FormulaReading | None]:
        """The formula model's test of each line of ``chunk`` (:mod:`.formula_check`): for a chemist's SMILES
        line it reads as a bag and writes without falling back; ``None`` for the others."""
        out: list[FormulaReading | None] = [None] * len(chunk)
        reader = self.formula_reader
        if reader is None or self.byproducts != CHEMIST:
            return out
        reader.byproducts, reader.extent = CHEMIST, self.extent
        written = [formula_example(ex) for ex in chunk]
        idx = [i for i, fx in enumerate(written) if fx is not None]
        if not idx:
            return out
        got = reader._predict_own([fx for fx in written if fx is not None], len(idx), 1)
        for i, rec in zip(idx, got, strict=True):
            if not rec.fallback:
                out[i] = FormulaReading(rec.prediction, agreement(parse_bag(rec.prediction)))
        return out

    def predict_data(self, examples: Sequence[BagExample], data: Sequence[Any], batch_size: int = 64) -> list[str]:
        """Top-1 lines for already featurised examples (the trainer's validation)."""
        lines: list[str] = []
        for s in range(0, len(examples), batch_size):
            chunk = examples[s : s + batch_size]
            outs = self._outputs(chunk, data[s : s + batch_size])
            lines += [self.decode_one(ex, lo).prediction for ex, lo in zip(chunk, outs, strict=True)]
        return lines
