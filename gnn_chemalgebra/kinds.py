"""The model-kind registry: every kind a config may name (``model.name``) and a checkpoint records (``meta.model``).

A :class:`ModelKind` says what a kind is made of: its ``model`` config section (a dataclass below), the ``train``
defaults that differ from the others, and where its training task, its network loader and its predictor factory
live. Those three are named as ``"module:attribute"`` references and imported only when asked for
(:meth:`ModelKind.load_task` from the training floor, :meth:`ModelKind.load_network` and
:meth:`ModelKind.load_predictor` from the inference floor; ``tests/test_imports.py`` reads the references as the
imports they are), so this ground-floor module imports no torch model code. Adding a kind is one entry in
:data:`KINDS` (and its config dataclass here); docs/add-model-kind.md walks through it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import InputError


def opt(default: Any, *, choices: tuple[str, ...] = (), lo: float | None = None, hi: float | None = None) -> Any:
    """A dataclass field with validation metadata (allowed strings, numeric range)."""
    return field(default=default, metadata={"choices": choices, "lo": lo, "hi": hi})


@dataclass
class GNNModelConfig:
    """The bag GNN (``gnn``) and its raw-coefficient ablation (``naive``); see ``models/gnn.py``."""

    name: str = opt("gnn", choices=("gnn", "naive"))
    conv: str = opt("gine", choices=("gine", "gatv2"))
    hidden: int = opt(128, lo=1)
    layers: int = opt(3, lo=1)
    heads: int = opt(4, lo=1)
    dropout: float = opt(0.1, lo=0.0, hi=1.0)
    bag_mixer: str = opt("transformer", choices=("transformer", "none"))
    bag_layers: int = opt(1, lo=0)
    set_encoder: str = opt("transformer", choices=("transformer", "deepsets"))
    set_layers: int = opt(2, lo=0)
    extent: str = opt("bayes", choices=("bayes", "learned"))
    leftover: str = opt("elements", choices=("elements", "vocab"))
    left_classes: int = opt(6, lo=1)
    mol_comp_features: bool = True
    mult_features: bool = True  # False: molecule embeddings blind to the coefficient pattern (rank/tie features)
    product_features: bool = False  # composition evidence: made from other molecules / makes another
    identity_min_count: int = opt(0, lo=0)  # >0: a learned identity vector per composition seen in at least
    # this many training lines (models/gnn.py); 0 = off
    identity_dropout: float = opt(0.1, lo=0.0, hi=1.0)  # training: share of molecules read as unknown
    structure_bits: int = opt(0, lo=0)  # formula + identity rows: Morgan count bits of each row's training
    # structure, read from the variant's SMILES twin (data/structures.py); 0 = off
    vocab_size: int = opt(512, lo=1)  # by-product vocabulary
    vocab_min_count: int = opt(1, lo=1)
    # fine-tuning (train.init_from): the start model's by-products in its order, then the training data's new ones
    # (up to vocab_size in all); False: the start model's only, so a by-product it never wrote cannot be written
    vocab_extend: bool = False
    edit_checkpoint: str | None = None  # SMILES: the bond-edit model used to validate whole lines


@dataclass
class EditModelConfig:
    """The bond-edit product-graph model; see ``models/edit_model.py``."""

    name: str = opt("edits", choices=("edits",))
    hidden: int = opt(128, lo=1)
    layers: int = opt(3, lo=1)
    attn_layers: int = opt(2, lo=0)
    heads: int = opt(4, lo=1)
    dropout: float = opt(0.1, lo=0.0, hi=1.0)


@dataclass
class TransformerModelConfig:
    """The sequence-Transformer baseline; see ``models/transformer.py``."""

    name: str = opt("transformer", choices=("transformer",))
    d_model: int = opt(512, lo=2)
    nhead: int = opt(8, lo=1)
    enc_layers: int = opt(6, lo=1)
    dec_layers: int = opt(6, lo=1)
    d_ff: int = opt(512, lo=1)
    dropout: float = opt(0.1, lo=0.0, hi=1.0)
    share_embeddings: bool = True
    positional: str = opt("sinusoidal", choices=("sinusoidal", "learned"))
    max_positions: int = opt(1024, lo=1)
    tokenizer: str = opt("paper", choices=("paper", "digit"))  # a whole {k} as one token, or {, digits, }


@dataclass(frozen=True)
class ModelKind:
    """One model kind. ``task``, ``loader`` and ``predictor`` are ``"module:attribute"`` references:

    - ``task``: the :class:`~gnn_chemalgebra.training.task.Task` class that trains it (called with no argument);
    - ``loader``: ``(checkpoint entries, path, device) -> torch.nn.Module``, the trained network in eval mode;
    - ``predictor``: ``(checkpoint entries, path, device, options) -> predictor``; with ``reads_lines`` the
      predictor has ``predict(examples) -> records`` (``gnnca predict --checkpoint``), else it is a helper model
      that another kind loads (the bond-edit model, ``--edit-checkpoint``).
    """

    name: str
    summary: str
    config: type
    task: str
    loader: str
    predictor: str
    reads_lines: bool = True
    train_defaults: Mapping[str, Any] = field(default_factory=dict)

    def load_task(self) -> Callable[[], Any]:
        return load_reference(self.task)

    def load_network(self) -> Callable[..., Any]:
        return load_reference(self.loader)

    def load_predictor(self) -> Callable[..., Any]:
        return load_reference(self.predictor)


_GNN_TRAIN = {"monitor": "EM"}
_GNN_PARTS = {
    "config": GNNModelConfig,
    "task": "gnn_chemalgebra.training.gnn:GNNTask",
    "loader": "gnn_chemalgebra.inference.runner:load_network",
    "predictor": "gnn_chemalgebra.inference.predictor:Predictor.from_loaded",
    "train_defaults": _GNN_TRAIN,
}

KINDS: dict[str, ModelKind] = {
    k.name: k
    for k in (
        ModelKind("gnn", "the bag GNN", **_GNN_PARTS),
        ModelKind("naive", "the bag GNN on raw coefficients (ablation)", **_GNN_PARTS),
        ModelKind(
            "edits",
            "the bond-edit model that draws the GNN's SMILES products",
            EditModelConfig,
            task="gnn_chemalgebra.training.edits:EditTask",
            loader="gnn_chemalgebra.inference.edit_decode:load_network",
            predictor="gnn_chemalgebra.inference.edit_decode:EditPredictor.from_loaded",
            reads_lines=False,
            train_defaults={
                "epochs": 30,
                "num_threads": 1,
                "tensorboard": False,
                "progress": False,
                "lr_schedule": "cosine_epochs",
                "monitor": "exact_edits",
            },
        ),
        ModelKind(
            "transformer",
            "the sequence-Transformer baseline",
            TransformerModelConfig,
            task="gnn_chemalgebra.training.seq2seq:TransformerTask",
            loader="gnn_chemalgebra.training.seq2seq:load_network",
            predictor="gnn_chemalgebra.inference.transformer:TransformerPredictor.from_loaded",
            train_defaults={
                "batch_size": 64,
                "optimizer": "adam",
                "lr": 5e-4,
                "betas": [0.9, 0.998],
                "lr_schedule": "noam",
                "warmup_steps": 400,
                "eval_every": 200,
                "monitor": "val_loss",
            },
        ),
    )
}


def kind(name: str, *, where: str | None = None) -> ModelKind:
    """The kind called ``name``; an unknown one is one :class:`InputError` line listing the known kinds."""
    found = KINDS.get(name) if isinstance(name, str) else None
    if found is None:
        raise InputError(f"unknown model kind {name!r}: known kinds are {', '.join(KINDS)}", path=where)
    return found


def kind_name_of_checkpoint(ck: Mapping[str, Any]) -> str:
    """The kind a checkpoint's entries record: ``meta.model`` (what the trainer writes), else the edit model's
    ``meta.kind`` or the saved ``config`` ``model.name`` (checkpoints written before ``meta.model``), else
    ``gnn`` (the oldest bag-GNN checkpoints carry neither)."""
    meta = ck.get("meta") or {}
    saved = (ck.get("config") or {}).get("model") or {}
    return str(meta.get("model") or meta.get("kind") or saved.get("name") or "gnn")


def kind_of_checkpoint(ck: Mapping[str, Any], path: str | None = None) -> ModelKind:
    """The :class:`ModelKind` of loaded checkpoint entries (``path`` names the file in the error line)."""
    return kind(kind_name_of_checkpoint(ck), where=path)


def load_reference(ref: str) -> Any:
    """The object a ``"package.module:Attr.attr"`` reference names, imported now."""
    module, _, attr = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj
