"""A trained sequence Transformer (the comparison baseline) behind the predictor's contract.

:meth:`~.predictor.Predictor.from_checkpoint` gives a :class:`TransformerPredictor` for a checkpoint whose
``meta.model`` is ``transformer`` (``gnnca train`` with ``model.name: transformer``), so ``gnnca predict``, its
stream, ``--json``, ``--skip-invalid``, ``--top-k`` and the Python API run it like a GNN. Each line's source is
written in the benchmark format and decoded by beam search; the record holds the best line, ``fallback`` false
(the model always writes a line; nothing checks that it balances), ``confidence`` = exp of the best line's
sequence log-probability, and the beam with each line's log-probability. The fields that only the GNN's
decoder knows (molecule roles, extent, main product) are empty.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ..checkpoint import load_checkpoint
from ..chem.bag import format_bag
from ..data.dataset import BagExample
from ..data.layout import variant_props
from ..data.tokenize import detokenize
from ..device import autocast
from ..errors import InputError
from ..training.seq2seq import LoadedModel, model_from_checkpoint, pad_batch
from .prediction import SEQUENCE, BeamEntry, Prediction

DEFAULT_MAX_LEN = 200  # target tokens, when the checkpoint's config names none


@dataclass(frozen=True)
class TransformerSpec:
    """How a ``--workers`` process loads a Transformer predictor again (picklable)."""

    checkpoint: str
    device: str = "cpu"
    edit_checkpoint = None  # a sequence model decodes with no bond-edit model

    def load(self) -> TransformerPredictor:
        ck = load_checkpoint(self.checkpoint, map_location="cpu")
        return TransformerPredictor.from_loaded(ck, self.checkpoint, self.device)


class TransformerPredictor:
    """Examples in, one record per example out, as :class:`~.predictor.Predictor` (see the module doc)."""

    naive = False
    source = None  # no calibration sidecars: the confidence is written uncalibrated
    type1 = None  # reads every line itself

    def __init__(self, lm: LoadedModel, checkpoint: str, vtype: int = 1, max_len: int = DEFAULT_MAX_LEN) -> None:
        self.lm = lm
        self.checkpoint = checkpoint
        self.repr = "smiles" if lm.tokenizer.startswith("smiles") else "formula"
        self.vtype = vtype
        self.max_len = max_len

    @classmethod
    def from_loaded(
        cls, ck: dict[str, Any], path: str, device: str | torch.device, options: Any = None
    ) -> TransformerPredictor:
        """The predictor of loaded Transformer checkpoint entries (``path`` names the file); ``options``: the
        :class:`~.predictor.PredictorOptions` it was asked with (decode settings are refused: GNN settings)."""
        if "," in path:
            raise InputError("an ensemble of Transformer checkpoints is not supported: give one file", path=path)
        if options is not None and (options.overrides or options.settings is not None):
            raise InputError("--set decode.* applies to GNN checkpoints, not to a Transformer checkpoint", path=path)
        lm = model_from_checkpoint(ck, path, device)
        variant = (ck.get("meta") or {}).get("variant")
        vtype = int(variant_props(variant)["type"]) if variant else 1
        max_len = int(((ck.get("config") or {}).get("decode") or {}).get("max_len") or DEFAULT_MAX_LEN)
        return cls(lm, path, vtype, max_len)

    @property
    def device(self) -> torch.device:
        return self.lm.device

    def spec(self) -> TransformerSpec:
        """How a ``--workers`` process loads this predictor again."""
        return TransformerSpec(self.checkpoint, str(self.device))

    @torch.no_grad()
    def predict(self, examples: Sequence[BagExample], batch_size: int = 64, beam: int = 1) -> list[Prediction]:
        """One record per example: the best of ``beam`` decoded lines and the beam (log-probabilities)."""
        self.lm.model.eval()
        out: list[Prediction] = []
        for s in range(0, len(examples), max(batch_size, 1)):
            chunk = examples[s : s + batch_size]
            lines = [format_bag(ex.terms) for ex in chunk]
            src = pad_batch([self.lm.vocab.encode(self.lm.tokenize(x)) for x in lines], self.lm.device)
            with autocast(self.lm.device):
                hyps = self.lm.model.beam_search(src, max(beam, 1), self.max_len)
            out += [self._record(h) for h in hyps]
        return out

    def _record(self, hyps: list[tuple[list[int], float]]) -> Prediction:
        beam = [BeamEntry(detokenize(self.lm.vocab.decode(ids)), round(float(lp), 4), None) for ids, lp in hyps]
        return Prediction(
            prediction=beam[0].prediction,
            fallback=False,
            confidence=round(math.exp(min(float(hyps[0][1]), 0.0)), 4),
            molecules=[],
            main_product=None,
            extent=None,
            extent_rule=None,
            beam=beam,
            layout=SEQUENCE,
            model="transformer",
        )
