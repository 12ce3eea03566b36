"""Training loop of the bond-edit model on USPTO-BAL base reactions.

Seeds, one thread by default (CPU runs share cores), a wall-clock budget (``train.max_minutes``) and a step
budget, early stopping on the validation *exact-edit* rate (every argmax pair/atom label right: cheap, and the
beam's top-1 follows it closely), atomic ``weights_only`` checkpoints (``last.pt`` every epoch, ``best.pt`` on
improvement) and resume from ``last.pt``. TensorBoard only when ``train.tensorboard`` is true.

Run: ``python -m gnn_chemalgebra.training.edits --config configs/edits_cpu.yaml [--resume] [--set k=v ...]``.
"""

from __future__ import annotations

import argparse
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
from ..config import load_config, typed
from ..data.edit_dataset import EDIT_FEATURIZER_VERSION, build_examples, load_records
from ..errors import InputError
from ..models.edit_model import build_edit_model, edit_hparams, edit_losses, exact_edit_hits
from .device import seed_everything, select_device
from .logging import RunLogger


def _versions() -> dict[str, str]:
    import rdkit
    import torch_geometric

    return {
        "torch": torch.__version__,
        "torch_geometric": torch_geometric.__version__,
        "rdkit": rdkit.__version__,
        "python": platform.python_version(),
    }


def _py_np_rng() -> dict[str, Any]:
    py = random.getstate()
    st = np.random.get_state()
    return {
        "python": [py[0], list(py[1]), py[2]],
        "numpy": [st[0], st[1].tolist(), int(st[2]), int(st[3]), float(st[4])],
    }


def _restore_py_np(rng: dict[str, Any]) -> None:
    py = rng["python"]
    random.setstate((py[0], tuple(py[1]), py[2]))
    st = rng["numpy"]
    np.random.set_state((st[0], np.array(st[1], dtype=np.uint32), st[2], st[3], st[4]))


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


def train_edits(cfg: dict[str, Any], resume: bool = False, examples: dict[str, list] | None = None) -> dict[str, Any]:
    """Train (or resume) the edit model described by ``cfg``; returns a summary (also ``run_dir/summary.json``).

    ``examples``: prebuilt ``{"train": [...], "valid": [...]}`` (tests); otherwise read from ``data.dir``.
    """
    cfg = typed(cfg, model_name="edits").to_dict()
    dcfg, mcfg, tcfg = cfg.get("data", {}), cfg.get("model", {}), cfg.get("train", {})
    run_dir = Path(cfg.get("run_dir", "runs/edits"))
    torch.set_num_threads(int(tcfg.get("num_threads", 1) or 1))
    seed = int(tcfg.get("seed", 0))
    seed_everything(seed)
    device = select_device(str(tcfg.get("device", "auto")))
    max_pairs = int(dcfg.get("max_pairs", 6000))

    t0 = time.perf_counter()
    skipped: dict[str, dict[str, int]] = {}
    if examples is None:
        if not dcfg.get("dir"):
            raise InputError("config needs data.dir (a built dataset) or prebuilt examples")
        examples = {}
        for name, split, lim in (
            ("train", dcfg.get("train_split", "train"), dcfg.get("limit")),
            ("valid", dcfg.get("val_split", "valid"), dcfg.get("val_limit")),
        ):
            recs = load_records(reaction_path(dcfg["dir"], split), int(lim or 0))
            examples[name], _, skipped[name] = build_examples(recs, max_pairs=max_pairs)
    train_ex, val_ex = examples["train"], examples["valid"]
    if not train_ex:
        raise InputError("no training examples")
    featurize_s = time.perf_counter() - t0

    hp = edit_hparams(mcfg, train_ex[0].x.size(1), train_ex[0].edge_attr.size(1))
    model = build_edit_model(hp).to(device)
    opt = torch.optim.AdamW(
        model.parameters(), lr=float(tcfg.get("lr", 1e-3)), weight_decay=float(tcfg.get("weight_decay", 0.0))
    )
    gen = torch.Generator()
    gen.manual_seed(seed)
    start_epoch, best, bad, best_metrics, step = 0, -1.0, 0, {}, 0
    last = run_dir / "last.pt"
    finished = False
    if resume and last.exists():
        ck = load_checkpoint(last)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optimizer"])
        meta = ck["meta"]
        start_epoch, best, bad = int(ck["epoch"]) + 1, meta["best"], meta["bad"]
        best_metrics, step = meta["best_metrics"], int(meta["step"])
        torch.set_rng_state(ck["rng_torch"])
        gen.set_state(ck["rng_loader"])
        _restore_py_np(meta["rng"])
        finished = bool(meta.get("finished"))

    bs = int(tcfg.get("batch_size", 32))
    loader = DataLoader(train_ex, batch_size=bs, shuffle=True, generator=gen)
    weights = {"nochange": float(tcfg.get("nochange_weight", 0.2)), "prod": float(tcfg.get("prod_weight", 0.5))}
    epochs, patience = int(tcfg.get("epochs", 30)), int(tcfg.get("patience", 5))
    clip = float(tcfg.get("grad_clip", 1.0))
    max_s = float(tcfg.get("max_minutes", 0) or 0) * 60.0
    max_steps = int(tcfg.get("max_steps", 0) or 0)
    sched_epochs = max(epochs, 1)
    log = RunLogger(run_dir, tensorboard=bool(tcfg.get("tensorboard", False)))
    history: list[dict[str, Any]] = []
    t_start = time.perf_counter()
    out_of_budget = False
    try:
        for epoch in range(start_epoch, 0 if finished else epochs):
            model.train()
            for grp in opt.param_groups:  # cosine decay per epoch, a pure function of the epoch (resume-safe)
                grp["lr"] = float(tcfg.get("lr", 1e-3)) * (0.1 + 0.45 * (1 + math.cos(math.pi * epoch / sched_epochs)))
            sums: dict[str, float] = {}
            n_seen, te = 0, time.perf_counter()
            for batch in loader:
                batch = batch.to(device)
                losses = edit_losses(model(batch), batch, weights)
                opt.zero_grad(set_to_none=True)
                losses["total"].backward()
                if clip > 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
                opt.step()
                step += 1
                n_seen += int(batch.num_graphs)
                for k, v in losses.items():
                    sums[k] = sums.get(k, 0.0) + float(v.detach()) * int(batch.num_graphs)
                if (max_s and time.perf_counter() - t_start > max_s) or (max_steps and step >= max_steps):
                    out_of_budget = True
                    break
            tr = {k: v / max(n_seen, 1) for k, v in sums.items()}
            tr["reactions_per_s"] = n_seen / max(time.perf_counter() - te, 1e-9)
            val = evaluate_edits(model, val_ex, bs, device) if val_ex else {"exact_edits": 0.0}
            log.scalars(tr, epoch, "train")
            log.scalars(val, epoch, "val")
            improved = val["exact_edits"] > best
            if improved:
                best, bad, best_metrics = val["exact_edits"], 0, {"epoch": epoch, **val}
            else:
                bad += 1
            rec = {"epoch": epoch, "step": step, "train": tr, "val": val, "elapsed_s": time.perf_counter() - t_start}
            history.append(rec)
            target = float(tcfg.get("target", 0) or 0)  # stop once validation reaches it (smoke tests)
            stop = bad >= patience or out_of_budget or epoch == epochs - 1 or (target > 0 and best >= target)
            state = {
                "model": model.state_dict(),
                "optimizer": opt.state_dict(),
                "epoch": epoch,
                "rng_torch": torch.get_rng_state(),
                "rng_loader": gen.get_state(),
                "config": cfg,
                "versions": _versions(),
                "meta": {
                    "kind": "edits",
                    "hparams": hp,
                    "featurizer_version": EDIT_FEATURIZER_VERSION,
                    "best": best,
                    "bad": bad,
                    "best_metrics": best_metrics,
                    "step": step,
                    "rng": _py_np_rng(),
                    "last": rec,
                    "finished": stop,
                },
            }
            if improved:
                save_checkpoint(run_dir / "best.pt", state)
            save_checkpoint(last, state)
            if bool(tcfg.get("progress", False)):
                print(json.dumps({"epoch": epoch, "train_total": tr.get("total"), **val}), flush=True)
            if stop:
                break
    finally:
        log.close()
    summary = {
        "run_dir": str(run_dir),
        "device": str(device),
        "n_train": len(train_ex),
        "n_val": len(val_ex),
        "skipped": skipped,
        "featurize_s": featurize_s,
        "best": best_metrics,
        "history": history,
        "n_params": sum(p.numel() for p in model.parameters()),
        "steps": step,
        "train_s": time.perf_counter() - t_start,
        "out_of_budget": out_of_budget,
    }
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--set", action="append", default=[], dest="overrides")
    args = ap.parse_args(argv)
    summary = train_edits(load_config(args.config, args.overrides), resume=args.resume)
    print(json.dumps({k: summary[k] for k in ("run_dir", "n_train", "n_val", "best", "steps", "train_s")}))


if __name__ == "__main__":
    main()
