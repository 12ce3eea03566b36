"""The bag GNN as a training task: toy-to-paper variants, bf16 autocast on CUDA, DDP through torchrun.

Trained through :func:`.run.train` (``model.name`` gnn or naive); the engine (:mod:`.engine`) runs the loop.
Whole-line validation EM needs the predictor, a higher floor, so it is injected: ``gnnca train`` passes
:func:`gnn_chemalgebra.inference.validation.predictor_validator`; without it the task reports its validation loss
only.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import torch
from torch.utils.data import DataLoader

from ..checkpoint import load_checkpoint
from ..config import Config, DataConfig
from ..data.augmented import AugmentedBagDataset, AugmentSettings
from ..data.bagbatch import PackedBags, collate_bags
from ..data.dataset import BagDataset, BagExample, ExtraVocab, load_examples, vocab_compositions
from ..data.featurize import Featurizer
from ..data.layout import variant_props
from ..data.structures import formula_structures, morgan_counts, read_smiles_molecules
from ..device import autocast
from ..errors import InputError
from ..models.gnn import BagGNNConfig, build_model, composition_key_multipliers, composition_keys
from ..models.losses import compute_losses
from . import distributed
from .distill import DistillTargets, distill_summary, load_teacher
from .task import Metrics, Task


class GNNTask(Task):
    """Bags of molecule graphs -> roles, extent and leftover; the losses of ``models/losses.py``."""

    name = "gnn"
    fallback_monitor = "loss"  # without the line validator there is no EM
    fused_optimizer = True
    takes_validator = True

    def build(self, cfg: Config, device: torch.device, ck: dict[str, Any] | None, gen: torch.Generator,
              dist_info: distributed.DistInfo) -> None:  # fmt: skip
        d, self.cfg, self.device = cfg.data, cfg, device
        if not d.dir or not d.variant:
            raise InputError("config needs data.dir and data.variant")
        props = variant_props(d.variant)
        self.repr, self.vtype = str(props["repr"]), int(props["type"])
        augment = AugmentSettings(d.augment_drop_reagents, d.augment_salts)
        by_folder = training_lines(d, roles=augment.active)
        self.line_counts = {folder: len(lines) for folder, lines in by_folder}
        train_ex = [ex for _, lines in by_folder for ex in lines]
        val_ex = load_examples(d.dir, d.variant, d.val_split, d.val_limit)
        self.feat = Featurizer(self.repr)
        mcfg = dict(vars(cfg.model))
        start = load_checkpoint(cfg.train.init_from) if ck is None and cfg.train.init_from else None
        start_vocab = ((start or {}).get("featurizer") or {}).get("vocab")
        if ck is not None:
            self.vocab = ExtraVocab(ck["featurizer"]["vocab"][1:])
        elif start_vocab:  # fine-tuning keeps the start model's by-products in its order: head rows are indexed by it
            self.vocab = ExtraVocab(start_vocab[1:])
            if cfg.model.vocab_extend:  # the start's rows first, so its head rows still index them
                self.vocab = self.vocab.extended(train_ex, cfg.model.vocab_size, cfg.model.vocab_min_count)
        else:
            self.vocab = ExtraVocab.build(train_ex, cfg.model.vocab_size, cfg.model.vocab_min_count)
        self.model_config = BagGNNConfig.from_settings(mcfg, self.feat.settings(), len(self.vocab))
        enc = self.model_config.encoder
        ident = None
        saved = ck if ck is not None else start  # resuming or fine-tuning: its rows and keys come with its weights
        saved_meta = (saved or {}).get("meta")
        enc.identity_vocab = BagGNNConfig.from_meta(saved_meta).encoder.identity_vocab if saved_meta else 0
        if ck is None and not enc.identity_vocab and cfg.model.identity_min_count:
            ident = identity_keys(train_ex, self.feat, cfg.model.identity_min_count)
            enc.identity_vocab = int(ident.numel())
        if enc.structure_bits and (self.repr != "formula" or not enc.identity_vocab):
            raise InputError(
                "model.structure_bits needs a formula variant with identity rows (model.identity_min_count)"
            )
        self.model = build_model(self.model_config, vocab_compositions(self.vocab, self.feat))
        if ident is not None and ident.numel():
            self.model.set_identity_keys(ident)
        # a resumed run or a start model that has them brings its rows with its weights
        if enc.structure_bits and (saved is None or "ident_struct" not in saved["model"]):
            keys = ident if ident is not None else saved["model"]["ident_keys"]
            rows = structure_rows(keys, self.feat, d.dir, d.variant, d.train_split, enc.structure_bits)
            self.model.set_structures(rows)
        self.model = self.model.to(device)
        if augment.active:  # bags built on access from their rewritten lines
            self.train_ds = AugmentedBagDataset(train_ex, self.feat, self.vocab, augment, self.repr, cfg.train.seed)
        else:
            self.train_ds = BagDataset(train_ex, self.feat, self.vocab, lazy=d.lazy)
        self.val_ds = BagDataset(val_ex, self.feat, self.vocab)  # small: featurised once, decoded by the validator
        bs = cfg.train.batch_size
        # In memory, every bag is packed once and a batch is a few index gathers; bags built on access are
        # collated per batch (the same tensors, data/bagbatch.py). Either loader samples the same indices.
        if self.train_ds.data is not None:
            packed = PackedBags(self.train_ds.data)
            loader_cls: Any = functools.partial(DataLoader, range(len(packed)), collate_fn=packed.batch)
        else:
            loader_cls = functools.partial(DataLoader, self.train_ds, collate_fn=collate_bags)
        # One seeded permutation per epoch shared by all ranks (rank r takes every N-th index); a single process
        # shuffles with the engine's loader generator. train.sampler=distributed: the DDP order with one process.
        self.sampler = None
        if dist_info.enabled or cfg.train.sampler == "distributed":
            self.sampler = distributed.sampler(self.train_ds, dist_info, cfg.train.seed)
            self.loader = loader_cls(batch_size=bs, sampler=self.sampler)
        else:
            self.loader = loader_cls(batch_size=bs, shuffle=True, generator=gen)
        self.net = distributed.wrap(self.model, dist_info, device)
        self.weights = {"mass_balance": cfg.train.mass_balance_weight,
                        "mass_balance_variance": float(cfg.train.mass_balance_variance)}  # fmt: skip
        self.amp = cfg.train.amp
        self.distill = self.build_distill(cfg, train_ex)

    def build_distill(self, cfg: Config, train_ex: Sequence[Any]) -> DistillTargets | None:
        """The teacher's rows for the training lines when ``train.distill_weight`` > 0 (training/distill.py)."""
        t = cfg.train
        if not t.distill_weight:
            return None
        if not t.distill_labels:
            raise InputError("train.distill_weight needs train.distill_labels (experiments/distill_teacher.py)")
        if cfg.data.extra_dirs:  # the teacher's rows are keyed by data.dir's reaction ids, which other folders reuse
            raise InputError("train.distill_weight reads data.dir's reactions only: leave data.extra_dirs empty")
        labels = load_teacher(t.distill_labels)
        if labels.repr != self.repr:
            raise InputError(f"teacher labels read {labels.repr}, this variant {self.repr}", path=t.distill_labels)
        targets = DistillTargets(labels, train_ex, int(self.feat.settings()["comp_dim"]))
        if not targets.lines_roles:
            raise InputError("no training line shares a reaction with the teacher labels", path=t.distill_labels)
        return targets.to(self.device)

    def steps_per_epoch(self) -> int:
        return len(self.loader)

    def train_batches(self, epoch: int) -> Iterable[Any]:
        if isinstance(self.train_ds, AugmentedBagDataset):
            self.train_ds.set_epoch(epoch)
        if self.sampler is not None:
            self.sampler.set_epoch(epoch)
        # The former trainer's progress wrapper (tqdm.auto) started one loader iterator it never used, drawing one
        # extra shuffle (or, with a sampler, one global-RNG seed) per epoch. Drawing it here keeps runs with the
        # same config and seed reproducing the losses and checkpoints of runs made before the engine.
        iter(self.loader)
        return self.loader

    def train_step(self, batch: Any) -> tuple[dict[str, torch.Tensor], int]:
        batch = batch.to(self.device)
        with autocast(self.device, self.amp):
            out = self.net(batch)
        losses = compute_losses(out, batch, self.model, self.weights)
        if self.distill is not None:
            kd = self.distill.losses(out, batch, self.cfg.train.distill_temperature)
            losses.update(kd)
            losses["total"] = losses["total"] + self.cfg.train.distill_weight * sum(kd.values())
        return losses, int(batch.num_graphs)

    @torch.no_grad()
    def validate(self) -> Metrics:
        """Mean validation loss (teacher-forced roles); whole-line EM comes from the injected validator."""
        self.model.eval()
        tot, n = 0.0, 0
        # its own generator: a loader without one draws its seed from the global RNG, shifting training's dropout
        bs, gen = self.cfg.train.batch_size, torch.Generator()
        for batch in DataLoader(self.val_ds, batch_size=bs, collate_fn=collate_bags, generator=gen):
            batch = batch.to(self.device)
            with autocast(self.device, self.amp):
                out = self.model(batch)
            tot += float(compute_losses(out, batch, self.model, self.weights)["total"]) * int(batch.num_graphs)
            n += int(batch.num_graphs)
        return {"loss": tot / max(n, 1)} if n else {}

    def checkpoint_entries(self) -> dict[str, Any]:
        return {
            "featurizer": {**self.feat.settings(), "vocab": self.vocab.items},
            "meta": {
                "model_config": self.model_config.to_dict(),
                "vtype": self.vtype,
                "variant": self.cfg.data.variant,
            },
        }

    def summary(self, result: dict[str, Any]) -> dict[str, Any]:
        out = {"n_train": len(self.train_ds), "n_val": len(self.val_ds), "vocab_size": len(self.vocab),
               "variant": self.cfg.data.variant, **distill_summary(self.distill)}  # fmt: skip
        if len(self.line_counts) > 1:
            out["train_lines_by_folder"] = self.line_counts  # data.dir, then each of data.extra_dirs
        if isinstance(self.train_ds, AugmentedBagDataset):
            d = self.cfg.data
            out["augment"] = {"drop_reagents": d.augment_drop_reagents, "salts": d.augment_salts,
                              "rewritable_lines": self.train_ds.rewritable}  # fmt: skip
        return out


def molecule_keys(feat: Featurizer, mols: Iterable[str]) -> dict[str, int]:
    """Composition key (:func:`composition_keys`) of each molecule string, in sorted order."""
    names = sorted(set(mols))
    if not names:
        return {}
    feat.cache_molecules(names)
    rows = torch.stack([feat.molecule(m)[1] for m in names])
    return dict(zip(names, composition_keys(rows, composition_key_multipliers(rows.size(1))).tolist(), strict=True))


def training_lines(d: DataConfig, roles: bool = False) -> list[tuple[str, list[BagExample]]]:
    """The training lines a GNN run reads, by folder: ``data.dir``'s (its first ``data.limit``), then those of each
    ``data.extra_dirs`` folder."""
    out = [(str(d.dir), load_examples(d.dir, d.variant, d.train_split, d.limit, roles=roles))]
    return out + [(f, load_examples(f, d.variant, d.train_split, roles=roles)) for f in d.extra_folders()]


def identity_keys(examples: Sequence[Any], feat: Featurizer, min_count: int) -> torch.Tensor:
    """Sorted composition keys of the molecules found in at least ``min_count`` training lines."""
    key_of = molecule_keys(feat, {m for ex in examples for m in ex.mols})
    if not key_of:
        return torch.zeros(0, dtype=torch.long)
    counts = Counter(k for ex in examples for k in {key_of[m] for m in ex.mols})
    return torch.tensor(sorted(k for k, c in counts.items() if c >= min_count), dtype=torch.long)


def structure_rows(keys: torch.Tensor, feat: Featurizer, data_dir: str, variant: str, split: str,
                   n_bits: int) -> torch.Tensor:  # fmt: skip
    """Fingerprint rows for identity keys ``keys`` (sorted; row 0 = unknown, zero): each composition's most
    frequent structure in the SMILES twin of the training lines (data/structures.py); zeros where it has none."""
    by_formula = formula_structures(read_smiles_molecules(data_dir, variant, split))
    smiles_of_key: dict[int, str] = {}
    for f, k in molecule_keys(feat, by_formula).items():
        smiles_of_key.setdefault(k, by_formula[f])
    fps = morgan_counts([smiles_of_key.get(k) for k in keys.tolist()], n_bits)
    return torch.cat([torch.zeros(1, n_bits, dtype=torch.uint8), torch.from_numpy(fps)])
