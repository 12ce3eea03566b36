"""The bond-edit model as a training task, on USPTO-BAL base reactions.

Early stopping on the validation *exact-edit* rate (every argmax pair/atom label right: cheap, and the beam's
top-1 follows it closely); the loop, checkpoints and resume are the engine's (:mod:`.engine`).

Run: ``gnnca train --config configs/edits_cpu.yaml [--resume] [--set k=v ...]``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch
from torch_geometric.loader import DataLoader

from ..config import Config, typed
from ..data.edit_dataset import EDIT_FEATURIZER_VERSION, SizeBucketBatchSampler, build_examples, load_records
from ..errors import InputError
from ..models.edit_model import build_edit_model, edit_hparams, edit_losses, exact_edit_hits, sample_pairs
from . import distributed
from .engine import Metrics, Task, fit


def reaction_path(data_dir: str | Path, split: str) -> Path:
    return Path(data_dir) / "uspto_bal" / f"reactions-{split}.jsonl"


@torch.no_grad()
def evaluate_edits(model: torch.nn.Module, examples: list, batch_size: int, device: torch.device) -> dict[str, float]:
    """Mean losses and the exact-edit rate over ``examples``."""
    model.eval()
    sums: dict[str, float] = {}
    hits, n = 0, 0
    for batch in DataLoader(examples, batch_size=batch_size, shuffle=False):
        batch = batch.to(device)
        out = model(batch)
        for k, v in edit_losses(out, batch).items():
            sums[k] = sums.get(k, 0.0) + float(v) * int(batch.num_graphs)
        hits += int(exact_edit_hits(out, batch).sum())
        n += int(batch.num_graphs)
    res = {f"loss_{k}": v / max(n, 1) for k, v in sums.items()}
    res["exact_edits"] = hits / max(n, 1)
    return res


class EditTask(Task):
    """Reactant graphs -> per-pair bond changes and per-atom labels (``models/edit_model.py``)."""

    name = "edits"

    def __init__(self, examples: dict[str, list] | None = None) -> None:
        self.examples = examples

    def build(self, cfg: Config, device: torch.device, ck: dict[str, Any] | None, gen: torch.Generator,
              dist_info: distributed.DistInfo) -> None:  # fmt: skip
        d, self.device = cfg.data, device
        self.skipped: dict[str, dict[str, int]] = {}
        if self.examples is None:
            if not d.dir:
                raise InputError("config needs data.dir (a built dataset) or prebuilt examples")
            self.examples = {}
            for name, split, lim in (("train", d.train_split, d.limit), ("valid", d.val_split, d.val_limit)):
                recs = load_records(reaction_path(d.dir, split), int(lim or 0))
                self.examples[name], _, self.skipped[name] = build_examples(recs, max_pairs=d.max_pairs)
        self.train_ex, self.val_ex = self.examples["train"], self.examples["valid"]
        if not self.train_ex:
            raise InputError("no training examples")
        ex = self.train_ex[0]
        self.hp = edit_hparams(dict(vars(cfg.model)), ex.x.size(1), ex.edge_attr.size(1))
        self.model = build_edit_model(self.hp, fast_train=cfg.train.fast_train).to(device)
        self.fused_optimizer = cfg.train.fast_train  # AdamW's fused kernel (the engine reads it after build)
        self.batch_size = cfg.train.batch_size
        self.sampler = None  # under torchrun: one seeded permutation per epoch, rank r takes every N-th index
        if dist_info.enabled:
            self.sampler = distributed.sampler(self.train_ex, dist_info, cfg.train.seed)
            self.loader = DataLoader(self.train_ex, batch_size=self.batch_size, sampler=self.sampler)
        elif cfg.train.size_buckets:  # reactions of similar atom counts together: the Transformer pads each batch
            sizes = [int(e.num_nodes) for e in self.train_ex]
            bucket = SizeBucketBatchSampler(sizes, self.batch_size, gen)
            self.loader = DataLoader(self.train_ex, batch_sampler=bucket)
        else:
            self.loader = DataLoader(self.train_ex, batch_size=self.batch_size, shuffle=True, generator=gen)
        self.net = distributed.wrap(self.model, dist_info, device)
        self.weights = {"nochange": cfg.train.nochange_weight, "prod": cfg.train.prod_weight}
        self.pair_keep = float(cfg.train.pair_keep)

    def steps_per_epoch(self) -> int:
        return len(self.loader)

    def train_batches(self, epoch: int) -> Iterable[Any]:
        if self.sampler is not None:
            self.sampler.set_epoch(epoch)
        return self.loader

    def train_step(self, batch: Any) -> tuple[dict[str, torch.Tensor], int]:
        batch = batch.to(self.device)
        if self.pair_keep >= 1.0:
            return edit_losses(self.net(batch), batch, self.weights), int(batch.num_graphs)
        sel, w = sample_pairs(batch, self.pair_keep)  # the easy non-bonded pairs, subsampled and reweighted
        return edit_losses(self.net(batch, pair_sel=sel), batch, self.weights, sel, w), int(batch.num_graphs)

    def validate(self) -> Metrics:
        if not self.val_ex:
            return {"exact_edits": 0.0}
        return evaluate_edits(self.model, self.val_ex, self.batch_size, self.device)

    def checkpoint_entries(self) -> dict[str, Any]:
        return {"meta": {"kind": "edits", "hparams": self.hp, "featurizer_version": EDIT_FEATURIZER_VERSION}}

    def summary(self, result: dict[str, Any]) -> dict[str, Any]:
        return {"n_train": len(self.train_ex), "n_val": len(self.val_ex), "skipped": self.skipped}


def train_edits(
    cfg: Config | dict[str, Any], resume: bool = False, examples: dict[str, list] | None = None
) -> dict[str, Any]:
    """Train (or resume) the edit model described by ``cfg``; returns a summary (also ``run_dir/summary.json``).

    ``examples``: prebuilt ``{"train": [...], "valid": [...]}`` (tests); otherwise read from ``data.dir``.
    """
    return fit(EditTask(examples), typed(cfg, model_name="edits"), resume=resume)
