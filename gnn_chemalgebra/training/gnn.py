"""Training loop of the bag GNN: seeds, device, bf16 autocast on CUDA, TensorBoard, early stopping on
validation EM, atomic checkpoints (``last.pt`` every epoch, ``best.pt`` on improvement) and exact resume."""

from __future__ import annotations

import json
import math
import platform
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch_geometric.loader import DataLoader

from ..checkpoint import load_checkpoint, save_checkpoint
from ..config import typed
from ..data.dataset import BagDataset, ExtraVocab, load_examples, vocab_compositions
from ..data.featurize import Featurizer
from ..data.layout import variant_props
from ..errors import InputError
from ..inference.predictor import Predictor, load_edit_model
from ..models.gnn import build_model, model_hparams
from ..models.losses import compute_losses
from . import distributed
from .device import autocast, seed_everything, select_device
from .logging import NullLogger, RunLogger, progress


def versions() -> dict[str, str]:
    import rdkit
    import torch_geometric

    from .. import __version__ as pkg

    return {
        "gnn_chemalgebra": str(pkg),
        "torch": torch.__version__,
        "torch_geometric": torch_geometric.__version__,
        "rdkit": rdkit.__version__,
        "python": platform.python_version(),
    }


def _rng_state(gen: torch.Generator) -> dict[str, Any]:
    np_state = np.random.get_state()
    return {
        "python": [list(random.getstate()[1]), random.getstate()[0], random.getstate()[2]],
        "numpy": [np_state[0], np_state[1].tolist(), int(np_state[2]), int(np_state[3]), float(np_state[4])],
    }


def _restore_rng(meta: dict[str, Any], ck: dict[str, Any], gen: torch.Generator) -> None:
    py = meta["rng"]["python"]
    random.setstate((py[1], tuple(py[0]), py[2]))
    npst = meta["rng"]["numpy"]
    np.random.set_state((npst[0], np.array(npst[1], dtype=np.uint32), npst[2], npst[3], npst[4]))
    torch.set_rng_state(ck["rng_torch"])
    gen.set_state(ck["rng_loader"])
    if torch.cuda.is_available() and "rng_cuda" in ck:
        torch.cuda.set_rng_state_all(list(ck["rng_cuda"]))


def scheduled_lr(base: float, step: int, total: int, schedule: str, warmup: float = 0.02) -> float:
    """Learning rate at optimiser ``step`` of ``total``: ``constant``, or ``cosine`` (linear warm-up over the
    first ``warmup`` fraction, then cosine decay to 1% of ``base``). Stateless, so a resume is exact."""
    if schedule == "constant" or total <= 0:
        return base
    if schedule != "cosine":
        raise InputError(f"unknown train.lr_schedule {schedule!r} (choose constant or cosine)")
    w = max(int(total * warmup), 1)
    if step < w:
        return base * (step + 1) / w
    frac = min((step - w) / max(total - w, 1), 1.0)
    return base * (0.01 + 0.99 * 0.5 * (1.0 + math.cos(math.pi * frac)))


def evaluate(pred: Predictor, ds: BagDataset, repr: str, batch_size: int) -> dict[str, Any]:
    from ..evaluation.metrics import evaluate_lines

    pred.model.eval()
    lines = pred.predict_data(ds.examples, ds.data, batch_size)
    res = evaluate_lines(lines, [ex.tgt or "" for ex in ds.examples], repr, "paper")
    return {k: res[k] for k in ("EM", "JAC", "F1", "mol_JAC", "mol_F1")}


def train_gnn(cfg: dict[str, Any], resume: bool = False) -> dict[str, Any]:
    cfg = typed(cfg).to_dict()
    dcfg, mcfg, tcfg = cfg.get("data", {}), cfg.get("model", {}), cfg.get("train", {})
    if not dcfg.get("dir") or not dcfg.get("variant"):
        raise InputError("config needs data.dir and data.variant")
    run_dir = Path(cfg.get("run_dir", "runs/gnn"))
    if tcfg.get("num_threads"):
        torch.set_num_threads(int(tcfg["num_threads"]))
    seed = int(tcfg.get("seed", 0))
    seed_everything(seed)
    device = select_device(str(tcfg.get("device", "auto")))
    dist_info = distributed.init(device)
    props = variant_props(dcfg["variant"])
    repr_, vtype = str(props["repr"]), int(props["type"])

    last = run_dir / "last.pt"
    ck = load_checkpoint(last) if resume and last.exists() else None
    train_ex = load_examples(dcfg["dir"], dcfg["variant"], dcfg.get("train_split", "train"), dcfg.get("limit"))
    val_ex = load_examples(dcfg["dir"], dcfg["variant"], dcfg.get("val_split", "valid"), dcfg.get("val_limit"))
    feat = Featurizer(repr_)
    if ck is not None:
        vocab = ExtraVocab(ck["featurizer"]["vocab"][1:])
    else:
        vocab = ExtraVocab.build(train_ex, int(mcfg.get("vocab_size", 512)), int(mcfg.get("vocab_min_count", 1)))
    hp = model_hparams(mcfg, feat.settings(), len(vocab))
    model = build_model(hp, vocab_compositions(vocab, feat)).to(device)
    opt = torch.optim.AdamW(
        model.parameters(), lr=float(tcfg.get("lr", 1e-3)), weight_decay=float(tcfg.get("weight_decay", 0.0))
    )
    gen = torch.Generator()
    gen.manual_seed(seed)
    start_epoch, best_em, bad, best_metrics = 0, -1.0, 0, {}
    if ck is not None:
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optimizer"])
        start_epoch = int(ck["epoch"]) + 1
        best_em, bad, best_metrics = ck["meta"]["best_em"], ck["meta"]["bad"], ck["meta"]["best_metrics"]
        _restore_rng(ck["meta"], ck, gen)

    t0 = time.perf_counter()
    lazy = bool(dcfg.get("lazy", False))  # featurise on access: memory grows with examples, not graphs
    train_ds = BagDataset(train_ex, feat, vocab, lazy=lazy)
    val_ds = BagDataset(val_ex, feat, vocab)  # validation is small and decoded from precomputed bags
    featurize_s = time.perf_counter() - t0
    bs = int(tcfg.get("batch_size", 32))
    # One seeded permutation per epoch shared by all ranks (rank r takes every N-th index); with a single
    # process the loader's generator shuffles as before, so single runs and resumes are unchanged.
    use_sampler = dist_info.enabled or tcfg.get("sampler") == "distributed"  # the latter: compare with N ranks
    sampler = distributed.sampler(train_ds, dist_info, seed) if use_sampler else None
    if sampler is not None:
        loader = DataLoader(train_ds, batch_size=bs, sampler=sampler)
    else:
        loader = DataLoader(train_ds, batch_size=bs, shuffle=True, generator=gen)
    net = distributed.wrap(model, dist_info, device)
    weights = {"mass_balance": float(tcfg.get("mass_balance_weight", 0.0))}
    edit = None  # SMILES: validate whole lines, new product graphs included, with the paired bond-edit model
    if repr_ == "smiles" and mcfg.get("edit_checkpoint"):
        edit = load_edit_model(str(mcfg["edit_checkpoint"]), device)
    predictor = Predictor(model, feat, vocab, vtype, device, edit=edit)
    epochs, patience = int(tcfg.get("epochs", 10)), int(tcfg.get("patience", 5))
    clip = float(tcfg.get("grad_clip", 1.0))
    use_amp = bool(tcfg.get("amp", True))
    log = RunLogger(run_dir, tensorboard=bool(tcfg.get("tensorboard", True))) if dist_info.is_main else NullLogger()
    show = bool(tcfg.get("progress", True))
    fz = {**feat.settings(), "vocab": vocab.items}
    history: list[dict[str, Any]] = []
    step = start_epoch * len(loader)
    # Budgets: train.max_minutes (wall clock of this call's training, validation included) and train.max_steps
    # (optimiser steps in total); the epoch in progress stops early, is validated and checkpointed.
    max_s = float(tcfg.get("max_minutes", 0) or 0) * 60.0
    max_steps = int(tcfg.get("max_steps", 0) or 0)
    base_lr, schedule = float(tcfg.get("lr", 1e-3)), str(tcfg.get("lr_schedule", "constant"))
    total_steps = max_steps or epochs * len(loader)
    t_start = time.perf_counter()
    out_of_budget = False
    if ck is not None and ck["meta"].get("out_of_budget"):
        start_epoch = epochs  # a budget-stopped run is finished; --resume does not train further
    try:
        for epoch in range(start_epoch, epochs):
            if sampler is not None:
                sampler.set_epoch(epoch)
            model.train()
            sums: dict[str, float] = {}
            n_seen, te = 0, time.perf_counter()
            for batch in progress(loader, f"epoch {epoch}", show):
                batch = batch.to(device)
                with autocast(device, use_amp):
                    out = net(batch)
                losses = compute_losses(out, batch, model, weights)
                opt.zero_grad(set_to_none=True)
                losses["total"].backward()
                for g in opt.param_groups:
                    g["lr"] = scheduled_lr(base_lr, step, total_steps, schedule)
                if clip > 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
                opt.step()
                step += 1
                n_seen += int(batch.num_graphs)
                for k, v in losses.items():
                    sums[k] = sums.get(k, 0.0) + float(v.detach()) * int(batch.num_graphs)
                stop = bool((max_s and time.perf_counter() - t_start > max_s) or (max_steps and step >= max_steps))
                if max_s and dist_info.enabled:
                    stop = distributed.broadcast_flag(stop, dist_info)  # every rank stops at the same step
                if stop:
                    out_of_budget = True
                    break
            train_s = time.perf_counter() - te
            if dist_info.enabled:
                sums = distributed.all_reduce_sums({**sums, "_n": float(n_seen)}, dist_info)
                n_seen = int(sums.pop("_n"))
            tr = {k: v / max(n_seen, 1) for k, v in sums.items()}
            tr["reactions_per_s"] = n_seen / max(train_s, 1e-9)
            log.scalars({k: v for k, v in tr.items() if k != "penalty"}, epoch, "train")
            log.scalars({"mass_balance_penalty": tr.get("penalty", 0.0)}, epoch, "train")
            if not dist_info.is_main:  # rank 0 validates and checkpoints; the others follow its decision
                if distributed.broadcast_flag(False, dist_info) or out_of_budget:
                    break
                continue
            val = evaluate(predictor, val_ds, repr_, bs)
            log.scalars(val, epoch, "val")
            improved = val["EM"] > best_em
            if improved:
                best_em, bad, best_metrics = val["EM"], 0, {"epoch": epoch, **val}
            else:
                bad += 1
            rec = {"epoch": epoch, "train": tr, "val": val}
            history.append(rec)
            state = {
                "model": model.state_dict(),
                "optimizer": opt.state_dict(),
                "epoch": epoch,
                "rng_torch": torch.get_rng_state(),
                "rng_loader": gen.get_state(),
                "config": cfg,
                "featurizer": fz,
                "versions": versions(),
                "meta": {
                    "hparams": hp,
                    "vtype": vtype,
                    "variant": dcfg["variant"],
                    "best_em": best_em,
                    "bad": bad,
                    "best_metrics": best_metrics,
                    "rng": _rng_state(gen),
                    "last": rec,
                    "out_of_budget": out_of_budget,
                    "step": step,
                },
            }
            if torch.cuda.is_available():
                state["rng_cuda"] = torch.cuda.get_rng_state_all()
            if improved:
                save_checkpoint(run_dir / "best.pt", state)
            save_checkpoint(last, state)
            stop_now = distributed.broadcast_flag(bad >= patience or out_of_budget, dist_info)
            if stop_now:
                break
    finally:
        log.close()
        distributed.barrier(dist_info)
        distributed.shutdown()
    summary = {
        "run_dir": str(run_dir),
        "device": str(device),
        "n_train": len(train_ds),
        "n_val": len(val_ds),
        "featurize_s": featurize_s,
        "best": best_metrics,
        "history": history,
        "vocab_size": len(vocab),
        "n_params": sum(p.numel() for p in model.parameters()),
        "steps": step,
        "train_s": time.perf_counter() - t_start,
        "out_of_budget": out_of_budget,
    }
    summary["world_size"] = dist_info.world_size
    if dist_info.is_main:
        (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary
