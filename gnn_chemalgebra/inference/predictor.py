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
from typing import Any

import torch

from ..config import DecodeConfig
from ..data.dataset import BagExample, ExtraVocab
from ..data.featurize import Featurizer
from ..errors import InputError
from .decode import Decoded
from .decoder import Decoder, Hypothesis, LineOutputs, kbest_assignments
from .report import build_record
from .runner import ModelRunner, load_edit_model, load_model

__all__ = ["Predictor", "PredictorSpec", "kbest_assignments", "load_edit_model"]


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
class PredictorSpec:
    """How to load a predictor again (another process: ``gnnca predict --workers``): checkpoint, device, edit
    model, extent rule and decode settings; picklable, unlike a loaded model."""

    checkpoint: str
    device: str = "cpu"
    edit_checkpoint: str | None = None
    extent: str = "auto"
    settings: DecodeConfig | None = None

    def load(self) -> Predictor:
        return Predictor.from_checkpoint(
            self.checkpoint, self.device, self.edit_checkpoint, extent=self.extent, settings=self.settings
        )


class Predictor:
    """Examples in, one JSON-able record per example out (``record["prediction"]`` is the target line)."""

    def __init__(
        self,
        model: torch.nn.Module,
        feat: Featurizer,
        vocab: ExtraVocab,
        vtype: int,
        device: torch.device | str = "cpu",
        edit: Any = None,
        edit_beam: int | None = None,
        settings: DecodeConfig | None = None,
        extent: str = "auto",
    ) -> None:
        settings = dataclasses.replace(settings or DecodeConfig())
        if edit_beam is not None:
            settings.edit_beam = edit_beam
        self.runner = ModelRunner(model, feat, vocab, vtype, device)
        self.decoder = Decoder(feat, vocab, settings, edit=edit, extent=extent)
        self.source: PredictorSpec | None = None  # set when loaded from a checkpoint

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_checkpoint(
        cls,
        path: str,
        device: str | torch.device = "cpu",
        edit_checkpoint: str | None = None,
        *,
        extent: str = "auto",
        settings: DecodeConfig | None = None,
    ) -> Predictor:
        """A predictor with the decode settings saved in the checkpoint (``settings`` replaces them whole).
        A SMILES checkpoint gets the bond-edit model of ``edit_checkpoint`` (default: the paired one,
        ``$GNNCA_EDIT_CHECKPOINT``, the bundled one, or ``runs/edits_cpu/best.pt``)."""
        lm = load_model(path, device, edit_checkpoint)
        r = lm.runner
        pred = cls(r.model, r.feat, r.vocab, r.vtype, r.device, lm.edit, None, settings or lm.settings, extent)
        pred.source = PredictorSpec(str(path), str(r.device), edit_checkpoint, extent)
        return pred

    def spec(self) -> PredictorSpec:
        """This predictor as a :class:`PredictorSpec` (its current extent rule and decode settings)."""
        if self.source is None:
            raise InputError("this predictor was built in memory, not loaded from a checkpoint: no workers")
        return dataclasses.replace(self.source, extent=self.extent, settings=dataclasses.replace(self.settings))

    @classmethod
    def build(cls, cfg_model: dict, feat: Featurizer, vocab: ExtraVocab, vtype: int) -> Predictor:
        r = ModelRunner.build(cfg_model, feat, vocab, vtype)
        return cls(r.model, feat, vocab, vtype)

    # ----------------------------------------------------------------- the parts, as attributes
    model = property(lambda self: self.runner.model)
    feat = property(lambda self: self.runner.feat)
    vocab = property(lambda self: self.runner.vocab)
    vtype = property(lambda self: self.runner.vtype)
    device = property(lambda self: self.runner.device)
    repr = property(lambda self: self.runner.repr)
    naive = property(lambda self: self.runner.naive)
    settings = property(lambda self: self.decoder.settings)
    edit_cache = property(lambda self: self.decoder.edit_cache)

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
        from .decoder import extent_rule_for

        extent_rule_for([], value)
        self.decoder.extent = value

    def _setting(name: str) -> property:  # type: ignore[misc]  # noqa: N805 - a property factory
        return property(
            lambda self: getattr(self.decoder.settings, name),
            lambda self, v: setattr(self.decoder.settings, name, v),
            doc=f"``decode.{name}`` (see DecodeConfig)",
        )

    balance_beam = _setting("balance_beam")
    edit_beam = _setting("edit_beam")
    edit_role_sets = _setting("edit_role_sets")
    edit_role_sets_t1 = _setting("edit_role_sets_t1")
    role_evidence = _setting("role_evidence")
    valence_check = _setting("valence_check")
    del _setting

    # ----------------------------------------------------------------- running
    def forward(self, data_list: Sequence[Any]) -> list[dict[str, Any]]:
        return self.runner.forward(data_list)

    def leftover_candidates(self, r: dict[str, Any], k: int = 4) -> list[tuple[float, str | None]]:
        return self.decoder.leftover_candidates(r, k)

    def _acceptable(self, d: Decoded) -> bool:
        return self.decoder.acceptable(d)

    def _decode_with_edits(
        self, ex: BagExample, hyps: list[tuple[float, tuple[int, ...]]], beam: int, scorer: Any
    ) -> list[Hypothesis]:
        return self.decoder._decode_with_edits(ex, hyps, beam, scorer)

    def decode_one(self, ex: BagExample, r: dict[str, Any] | LineOutputs, beam: int = 1) -> dict[str, Any]:
        """The record of one example from its network outputs (one example's tensors or :class:`LineOutputs`)."""
        lo = r if isinstance(r, LineOutputs) else self.decoder.line_outputs(r)
        res = self.decoder.decode(ex, lo, beam, self.runner.extent_scorer_for(lo.bag))
        return build_record(ex, lo, res, self.vocab, self.naive)

    def _outputs(self, examples: Sequence[BagExample], data: Sequence[Any] | None = None) -> list[LineOutputs]:
        """Network outputs per example, as numbers: from already featurised bags ``data``, else featurised and
        batched here in one go."""
        out = self.runner.run(examples) if data is None else self.runner.run_data(data)
        lines = self.decoder.batch_line_outputs(out)
        self.decoder.warm_edit_cache(examples, lines)
        return lines

    def predict(self, examples: Sequence[BagExample], batch_size: int = 64, beam: int = 1) -> list[dict[str, Any]]:
        """One record per example (see :func:`.report.build_record`); ``fallback`` marks lines written without
        a balanced hypothesis (count them with :func:`.report.count_fallbacks`)."""
        results: list[dict[str, Any]] = []
        for s in range(0, len(examples), batch_size):
            chunk = examples[s : s + batch_size]
            with _collector_paused():
                results += [self.decode_one(ex, lo, beam) for ex, lo in zip(chunk, self._outputs(chunk), strict=True)]
        return results

    def predict_data(self, examples: Sequence[BagExample], data: Sequence[Any], batch_size: int = 64) -> list[str]:
        """Top-1 lines for already featurised examples (the trainer's validation)."""
        lines: list[str] = []
        for s in range(0, len(examples), batch_size):
            chunk = examples[s : s + batch_size]
            outs = self._outputs(chunk, data[s : s + batch_size])
            lines += [self.decode_one(ex, lo)["prediction"] for ex, lo in zip(chunk, outs, strict=True)]
        return lines
