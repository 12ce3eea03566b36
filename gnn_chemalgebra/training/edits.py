"""The bond-edit model as a training task, on USPTO-BAL base reactions.

Early stopping on the validation *exact-edit* rate (every argmax pair/atom label right: cheap, and the beam's
top-1 follows it closely); the loop, checkpoints and resume are the engine's (:mod:`.engine`).

Run: ``gnnca train --config configs/edits_cpu.yaml [--resume] [--set k=v ...]``, or from Python
:func:`.run.train` (``train(cfg, task=EditTask(examples))`` with prebuilt examples).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import ConcatDataset
from torch_geometric.loader import DataLoader

from ..config import Config, DataConfig
from ..data.edit_dataset import (
    EDIT_FEATURIZER_VERSION,
    SizeBucketBatchSampler,
    build_examples,
    load_records,
    record_source,
)
from ..errors import InputError
from ..models.edit_model import build_edit_model, edit_hparams, edit_losses, exact_edit_hits, sample_pairs
from . import distributed
from .task import Metrics, Task


def reaction_path(data_dir: str | Path, split: str) -> Path:
    return Path(data_dir) / "uspto_bal" / f"reactions-{split}.jsonl"


KNOWN_SOURCES = ("local", "uspto_full", "uspto_500_mt", "templates")  # templates: ``gnnca data templates``


def parse_sources(spec: str) -> tuple[str, ...]:
    """``data.edit_sources`` as a tuple (empty = every source)."""
    names = tuple(dict.fromkeys(n.strip() for n in spec.split(",") if n.strip()))
    bad = [n for n in names if n not in KNOWN_SOURCES]
    if bad:
        raise InputError(f"data.edit_sources: unknown source {bad[0]!r} (known: {', '.join(KNOWN_SOURCES)})")
    return names


def extra_reaction_path(folder: str | Path) -> Path:
    """The closed reactions of a ``data.extra_dirs`` folder (``gnnca data dropped`` / ``gnnca data templates``)."""
    return Path(folder) / "reactions-train.jsonl"


def split_examples(
    d: DataConfig, split: str, limit: int, sources: Sequence[str] = (), cache_dir: Path | None = None,
    path: Path | None = None,
) -> tuple[Sequence[Any], dict[str, Any]]:  # fmt: skip
    """Labelled examples of one split and a report of what was read, used and skipped, per source.

    ``sources``: records of other sources are left out (counted as ``excluded``). ``cache_dir``: the examples
    are loaded from / saved to a hash-keyed file there (:mod:`..data.edit_cache`) and come back packed.
    ``path``: another reaction file than ``data.dir``'s (an extra folder's); records without atom maps are
    skipped and counted as in any file.
    """
    path = path or reaction_path(d.dir, split)
    if cache_dir is not None:
        from ..data.edit_cache import PackedEditExamples, example_cache_key, load_examples, save_examples

        key = example_cache_key(path, split=split, limit=limit, sources=list(sources), max_pairs=d.max_pairs)
        cache_path = cache_dir / f"edit-examples-{split}-{key[:16]}.pt"
        if cache_path.exists():
            packed, report = load_examples(cache_path, key)
            return packed, {**report, "cache": f"loaded {cache_path}"}
    recs = load_records(path, limit)
    excluded: dict[str, int] = {}
    if sources:
        kept = []
        for r in recs:
            src = record_source(r)
            if src in sources:
                kept.append(r)
            else:
                excluded[src] = excluded.get(src, 0) + 1
        recs = kept
    by_source: dict[str, dict[str, Any]] = {}
    examples, _, skipped = build_examples(recs, max_pairs=d.max_pairs, by_source=by_source)
    report = {"file": str(path), "used": len(examples), "skipped": skipped, "by_source": by_source,
              "excluded": excluded}  # fmt: skip
    if cache_dir is not None:
        packed = PackedEditExamples.pack(examples)
        save_examples(cache_path, packed, report, key)
        return packed, {**report, "cache": f"written {cache_path}"}
    return examples, report


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
        """``examples``: prebuilt ``{"train": [...], "valid": [...]}`` (tests); otherwise read from ``data.dir``."""
        self.examples = examples

    def build(self, cfg: Config, device: torch.device, ck: dict[str, Any] | None, gen: torch.Generator,
              dist_info: distributed.DistInfo) -> None:  # fmt: skip
        d, self.device = cfg.data, device
        self.skipped: dict[str, dict[str, int]] = {}
        self.reports: dict[str, dict[str, Any]] = {}
        if self.examples is None:
            if not d.dir:
                raise InputError("config needs data.dir (a built dataset) or prebuilt examples")
            self.examples = {}
            sources = parse_sources(d.edit_sources)
            cache_dir = Path(cfg.run_dir) / "cache" if d.cache_examples else None
            for name, split, lim in (("train", d.train_split, d.limit), ("valid", d.val_split, d.val_limit)):
                self.examples[name], rep = split_examples(
                    d, split, int(lim or 0), sources if name == "train" else (), cache_dir
                )
                self.skipped[name] = rep["skipped"]
                self.reports[name] = rep
                if dist_info.is_main:
                    print(f"[edits] {name}: {_report_line(rep)}", file=sys.stderr)
            self.examples["train"] = self._with_extra(d, sources, cache_dir, dist_info)
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

    def _with_extra(self, d: DataConfig, sources: Sequence[str], cache_dir: Path | None,
                    dist_info: distributed.DistInfo) -> Sequence[Any]:  # fmt: skip
        """``data.dir``'s training examples followed by those of each ``data.extra_dirs`` folder (its mapped
        reactions: closed dropped reactions, rule-made ones), each folder reported on its own line."""
        parts = [self.examples["train"]]
        for folder in d.extra_folders():
            path = extra_reaction_path(folder)
            if not path.is_file():
                raise InputError("data.extra_dirs: no reactions-train.jsonl in this folder", path=folder)
            ex, rep = split_examples(d, "train", 0, sources, cache_dir, path=path)
            parts.append(ex)
            self.reports[f"train:{folder}"] = rep
            if dist_info.is_main:
                print(f"[edits] train, {folder}: {_report_line(rep)}", file=sys.stderr)
        return parts[0] if len(parts) == 1 else ConcatDataset(parts)

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
        out = {"n_train": len(self.train_ex), "n_val": len(self.val_ex), "skipped": self.skipped}
        if self.reports:
            out["sources"] = {
                k: {"by_source": r["by_source"], "excluded": r["excluded"]} for k, r in self.reports.items()
            }
            train_sources: dict[str, dict[str, Any]] = {}
            for k, r in self.reports.items():
                if k == "train" or k.startswith("train:"):
                    train_sources.update({s: row for s, row in r["by_source"].items() if row.get("used")})
            out["training_data"] = training_data_label(train_sources)
        return out


def training_data_label(by_source: dict[str, dict[str, Any]]) -> str:
    """``local``, ``local+extra`` or ``extra``: which records the training examples came from."""
    used = {s for s, row in by_source.items() if row.get("used")}
    local, extra = "local" in used, bool(used - {"local"})
    return "+".join(["local"] * local + ["extra"] * extra) or "none"


def _report_line(rep: dict[str, Any]) -> str:
    parts = [f"{s} {row['used']:,}/{row['read']:,} used" + (f" (skipped {row['skipped']})" if row["skipped"] else "")
             for s, row in rep["by_source"].items()]  # fmt: skip
    parts += [f"{s} {n:,} excluded by data.edit_sources" for s, n in rep["excluded"].items()]
    return f"{rep['used']:,} examples; " + "; ".join(parts) + (f"; cache {rep['cache']}" if "cache" in rep else "")
