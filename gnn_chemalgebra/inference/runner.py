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

from ..checkpoint import load_checkpoint
from ..config import DecodeConfig, decode_settings
from ..data.bagbatch import collate_bags
from ..data.dataset import BagExample, ExtraVocab, collate_examples, to_data, vocab_compositions
from ..data.featurize import Featurizer
from ..errors import InputError
from ..io import checkpoint_paths
from ..models.gnn import BagGNNConfig, build_model
from .hypotheses import ExampleOutputs


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
        self.learned_extent = model.config.heads.extent == "learned"

    @classmethod
    def build(cls, cfg_model: dict, feat: Featurizer, vocab: ExtraVocab, vtype: int) -> ModelRunner:
        """An untrained network of the given model settings (tests, smoke runs)."""
        config = BagGNNConfig.from_settings(cfg_model, feat.settings(), len(vocab))
        return cls(build_model(config, vocab_compositions(vocab, feat)), feat, vocab, vtype)

    def featurize(self, examples: Sequence[BagExample]) -> list[Any]:
        """One ``BagData`` per example (the per-bag path; :meth:`run` batches without them)."""
        return [to_data(ex, self.feat, self.vocab, i, labels=False) for i, ex in enumerate(examples)]

    @torch.no_grad()
    def run(self, examples: Sequence[BagExample]) -> BatchOutputs:
        """One batched pass over ``examples``, featurised straight into one batch (no per-bag objects)."""
        return self._outputs(collate_examples(examples, self.feat))

    @torch.no_grad()
    def run_data(self, data_list: Sequence[Any]) -> BatchOutputs:
        """One batched pass over featurised bags (``BagData``, e.g. a dataset's)."""
        return self._outputs(collate_bags(list(data_list)))

    def forward(self, data_list: Sequence[Any]) -> list[ExampleOutputs]:
        """One batched pass over featurised bags; per example a dict of CPU tensors (``role_p`` [mols, classes],
        ``extra_p``, ...)."""
        out = self.run_data(data_list)
        return [out.example(i) for i in range(len(out))]

    @torch.no_grad()
    def _outputs(self, batch: Any) -> BatchOutputs:
        out = self.model(batch.to(self.device))
        return BatchOutputs(out, batch.num_mols.tolist(), self.naive)

    def extent_scorer(self, out: ExampleOutputs) -> Any:
        """The learned Type-2 extent scorer bound to one example's bag embedding (``None``: exact Bayes rule)."""
        return self.extent_scorer_for(out["bag"])

    def extent_scorer_for(self, bag: torch.Tensor | None) -> Any:
        """:meth:`extent_scorer` for a bag embedding ``[1, dim]``."""
        if not self.learned_extent or bag is None:
            return None

        def scorer(cands: list[int], feats: list[list[float]]) -> list[float]:
            f = torch.tensor(feats, dtype=torch.float, device=self.device)
            with torch.no_grad():
                return self.model.score_extents(bag.expand(len(cands), -1), f).float().cpu().tolist()

        return scorer


class BatchOutputs:
    """The network's outputs for one batch, as batch tensors with each example's rows: ``role_p`` [molecules,
    classes] (``mol_ptr``), ``extra_p`` [bags, vocabulary], ``bag`` embeddings, and with the leftover head its
    slots (``left_lp`` [slots, count classes], ``left_elem``; ``left_ptr``: a bag's slots are consecutive)."""

    def __init__(self, out: dict[str, torch.Tensor], mols_per_bag: list[int], naive: bool) -> None:
        self.n = len(mols_per_bag)
        self.mol_ptr = [0]
        for k in mols_per_bag:
            self.mol_ptr.append(self.mol_ptr[-1] + k)
        self.role_p = out["role_logits"].float().softmax(-1).cpu()
        self.extra_p = out["extra_logits"].float().sigmoid().cpu()
        self.bag = out["bag"]
        self.has_left = "left_logits" in out
        if self.has_left:
            self.left_lp = out["left_logits"].float().log_softmax(-1).cpu()
            self.left_elem = out["left_elem"].cpu()
            left_bag = out["left_bag"].cpu()  # sorted: slots are unique (bag, element) keys in order
            counts = torch.bincount(left_bag, minlength=self.n).tolist()
            self.left_ptr = [0]
            for c in counts:
                self.left_ptr.append(self.left_ptr[-1] + c)
        self.naive = naive
        if naive:
            self.coef = out["coef_logits"].argmax(-1).cpu().tolist()
            self.newcoef = out["newcoef_logits"].argmax(-1).cpu().tolist()

    def __len__(self) -> int:
        return self.n

    def bag_row(self, i: int) -> torch.Tensor:
        return self.bag[i : i + 1].float()

    def example(self, i: int) -> ExampleOutputs:
        """Example ``i``'s outputs as one dict of tensors (what :meth:`ModelRunner.forward` returns)."""
        a, b = self.mol_ptr[i], self.mol_ptr[i + 1]
        r = ExampleOutputs(role_p=self.role_p[a:b], extra_p=self.extra_p[i], bag=self.bag_row(i))
        if self.naive:
            r["coef"], r["newcoef"] = self.coef[a:b], int(self.newcoef[i])
        if self.has_left:
            s, e = self.left_ptr[i], self.left_ptr[i + 1]
            r["left_lp"], r["left_elem"] = self.left_lp[s:e], self.left_elem[s:e]
        return r


@dataclass
class LoadedModel:
    """What a checkpoint gives the predictor: the runner, its decode settings, and the paired edit model (with
    the checkpoint it was read from; ``None``: the default one, or none)."""

    runner: ModelRunner
    settings: DecodeConfig
    edit: Any
    edit_path: str | None = None


def load_model(
    path: str | Path,
    device: str | torch.device = "cpu",
    edit_checkpoint: str | None = None,
    first: dict[str, Any] | None = None,
) -> LoadedModel:
    """A GNN checkpoint -> runner + the ``decode`` section saved with it (defaults for older checkpoints).

    ``path`` may name several checkpoints of one representation, comma-separated (``a.pt,b.pt``): their heads
    are averaged (:class:`~..models.bag_ensemble.BagEnsemble`); the first one gives the vocabulary, the decode
    settings and the paired edit model.
    A SMILES checkpoint gets the bond-edit model of ``edit_checkpoint`` (default: the one the GNN was trained
    with, ``$GNNCA_EDIT_CHECKPOINT``, the bundled one, or ``runs/edits_cpu/best.pt``); without any, new product
    graphs stay uncovered. ``first``: the first checkpoint's entries, already loaded (not read again)."""
    paths = checkpoint_paths(path)
    loaded = [load_bag_model(p, first if i == 0 else None) for i, p in enumerate(paths)]
    ck, feat, vocab, model = loaded[0]
    for p, (_, f, _, _) in zip(paths[1:], loaded[1:], strict=True):
        if f.repr != feat.repr:
            msg = f"an ensemble needs one representation: {paths[0]} reads {feat.repr}, this {f.repr}"
            raise InputError(msg, path=p)
    if len(loaded) > 1:
        from ..models.bag_ensemble import BagEnsemble

        same_vocab = all(v.items == vocab.items for _, _, v, _ in loaded)
        model = BagEnsemble([m for *_, m in loaded], same_vocab)
    saved = ck.get("config") or {}
    settings = decode_settings(saved)
    edit = None
    if feat.repr == "smiles":
        if edit_checkpoint is None:
            edit_checkpoint = paired_edit_checkpoint(paths[0], saved, settings.edit_model)
        edit = load_edit_model(edit_checkpoint, device)
    runner = ModelRunner(model, feat, vocab, int(ck["meta"]["vtype"]), device)
    return LoadedModel(runner, settings, edit, edit_checkpoint)


def file_beside(main: str, name: str, what: str, setting: str) -> Path:
    """The file a checkpoint's decode ``setting`` names (``name``, relative to the checkpoint's folder unless
    absolute); a missing one is one line naming the setting."""
    path = Path(name) if Path(name).is_absolute() else Path(main).resolve().parent / name
    if not path.is_file():
        raise InputError(f"the {what} named by {setting} is missing: {path}", path=main)
    return path


def paired_edit_checkpoint(main: str, saved: dict[str, Any], named: str) -> str | None:
    """The bond-edit checkpoint a SMILES checkpoint names for itself: ``named`` (its ``decode.edit_model``, a file
    beside it), else the edit model it was validated with in training (``model.edit_checkpoint``) where that file
    exists; ``None``: the default one."""
    if named:
        return str(file_beside(main, named, "bond-edit model", "decode.edit_model"))
    paired = (saved.get("model") or {}).get("edit_checkpoint")
    return paired if paired and Path(paired).exists() else None


def load_bag_model(
    path: str, ck: dict[str, Any] | None = None
) -> tuple[dict[str, Any], Featurizer, ExtraVocab, torch.nn.Module]:
    """One bag-GNN checkpoint: (the checkpoint, its featurizer, its by-product vocabulary, the network);
    ``ck``: its entries, already loaded."""
    need = ("model", "featurizer", "meta")
    if ck is None or any(k not in ck for k in need):  # read (again): a missing entry is the loader's one line
        ck = load_checkpoint(path, map_location="cpu", require=need, kind="GNN (bag model)")
    fz = ck["featurizer"]
    feat = Featurizer(fz["repr"])
    vocab = ExtraVocab(fz["vocab"][1:])
    model = build_model(BagGNNConfig.from_meta(ck["meta"], path), vocab_compositions(vocab, feat))
    model.load_state_dict(ck["model"])
    return ck, feat, vocab, model


def load_network(ck: dict[str, Any], path: str | Path, device: str | torch.device = "cpu") -> torch.nn.Module:
    """The bag GNN of loaded checkpoint entries, in eval mode (the registry's loader for ``gnn`` and ``naive``)."""
    return load_bag_model(str(path), ck)[3].to(device).eval()
