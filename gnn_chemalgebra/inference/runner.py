"""The model runner: a checkpoint in, the bag GNN's raw outputs per example out (no decoding here).

It owns the network, its featurizer and vocabulary and the device; :class:`~.decoder.Decoder` turns its outputs
into hypotheses and :mod:`.report` into records.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch_geometric.data import Batch

from ..checkpoint import load_checkpoint
from ..config import DecodeConfig, decode_settings
from ..data.dataset import BagExample, ExtraVocab, to_data, vocab_compositions
from ..data.featurize import Featurizer
from ..models.gnn import build_model, model_hparams


def load_edit_model(path: str | None, device: str | torch.device = "cpu") -> Any:
    """The bond-edit predictor at ``path`` or the default one; ``None`` when no default exists."""
    from .edit_decode import EditPredictor, default_checkpoint

    if path is not None:
        return EditPredictor.from_checkpoint(path, device)
    ck = default_checkpoint()
    return EditPredictor.from_checkpoint(ck, device) if ck.exists() else None


class ModelRunner:
    """Network outputs for examples: role probabilities per molecule, by-product probabilities, the leftover
    head's log-probabilities, the bag embedding (for the learned extent scorer) and the naive head's choices."""

    def __init__(
        self,
        model: torch.nn.Module,
        feat: Featurizer,
        vocab: ExtraVocab,
        vtype: int,
        device: torch.device | str = "cpu",
    ) -> None:
        self.model = model.to(device).eval()
        self.feat = feat
        self.vocab = vocab
        self.vtype = vtype
        self.device = torch.device(device)
        self.repr = feat.repr
        self.naive = getattr(model, "naive", False)
        self.learned_extent = model.hp.get("extent") == "learned"

    @classmethod
    def build(cls, cfg_model: dict, feat: Featurizer, vocab: ExtraVocab, vtype: int) -> ModelRunner:
        """An untrained network of the given model settings (tests, smoke runs)."""
        hp = model_hparams(cfg_model, feat.settings(), len(vocab))
        return cls(build_model(hp, vocab_compositions(vocab, feat)), feat, vocab, vtype)

    def featurize(self, examples: Sequence[BagExample]) -> list[Any]:
        return [to_data(ex, self.feat, self.vocab, i, labels=False) for i, ex in enumerate(examples)]

    @torch.no_grad()
    def forward(self, data_list: Sequence[Any]) -> list[dict[str, Any]]:
        """One batched pass; per example a dict of CPU tensors (``role_p`` [mols, classes], ``extra_p``, ...)."""
        batch = Batch.from_data_list(list(data_list)).to(self.device)
        out = self.model(batch)
        role_p = out["role_logits"].float().softmax(-1).cpu()
        extra_p = out["extra_logits"].float().sigmoid().cpu()
        if "left_logits" in out:
            left_lp = out["left_logits"].float().log_softmax(-1).cpu()
            left_bag, left_elem = out["left_bag"].cpu(), out["left_elem"].cpu()
        res = []
        mol_ptr = torch.cumsum(torch.tensor([0] + [d.num_mols for d in data_list]), 0)
        for i in range(len(data_list)):
            a, b = int(mol_ptr[i]), int(mol_ptr[i + 1])
            r = {"role_p": role_p[a:b], "extra_p": extra_p[i], "bag": out["bag"][i : i + 1].float()}
            if self.naive:
                r["coef"] = out["coef_logits"][a:b].argmax(-1).cpu().tolist()
                r["newcoef"] = int(out["newcoef_logits"][i].argmax())
            if "left_logits" in out:
                sel = left_bag == i
                r["left_lp"], r["left_elem"] = left_lp[sel], left_elem[sel]
            res.append(r)
        return res

    def extent_scorer(self, out: dict[str, Any]) -> Any:
        """The learned Type-2 extent scorer bound to one example's bag embedding (``None``: exact Bayes rule)."""
        if not self.learned_extent:
            return None
        bag = out["bag"]

        def scorer(cands: list[int], feats: list[list[float]]) -> list[float]:
            f = torch.tensor(feats, dtype=torch.float, device=self.device)
            with torch.no_grad():
                return self.model.score_extents(bag.expand(len(cands), -1), f).float().cpu().tolist()

        return scorer


@dataclass
class LoadedModel:
    """What a checkpoint gives the predictor: the runner, its decode settings, and the paired edit model."""

    runner: ModelRunner
    settings: DecodeConfig
    edit: Any


def load_model(path: str | Path, device: str | torch.device = "cpu", edit_checkpoint: str | None = None) -> LoadedModel:
    """A GNN checkpoint -> runner + the ``decode`` section saved with it (defaults for older checkpoints).

    A SMILES checkpoint gets the bond-edit model of ``edit_checkpoint`` (default: the one the GNN was trained
    with, ``$GNNCA_EDIT_CHECKPOINT``, the bundled one, or ``runs/edits_cpu/best.pt``); without any, new product
    graphs stay uncovered."""
    ck = load_checkpoint(str(path), map_location="cpu", require=("model", "featurizer", "meta"), kind="GNN (bag model)")
    fz = ck["featurizer"]
    feat = Featurizer(fz["repr"])
    vocab = ExtraVocab(fz["vocab"][1:])
    hp = ck["meta"]["hparams"]
    model = build_model(hp, vocab_compositions(vocab, feat))
    model.load_state_dict(ck["model"])
    saved = ck.get("config") or {}
    edit = None
    if feat.repr == "smiles":
        paired = saved.get("model", {}).get("edit_checkpoint")
        if edit_checkpoint is None and paired and Path(paired).exists():
            edit_checkpoint = paired  # the edit model this GNN was validated with
        edit = load_edit_model(edit_checkpoint, device)
    runner = ModelRunner(model, feat, vocab, int(ck["meta"]["vtype"]), device)
    return LoadedModel(runner, decode_settings(saved), edit)
