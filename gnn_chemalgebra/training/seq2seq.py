"""Training and prediction of the sequence-Transformer baseline under the project's harness.

``gnnca train`` dispatches here when ``model.name == "transformer"``; ``gnnca predict`` calls
:func:`predict_lines`. Checkpoints follow :mod:`gnn_chemalgebra.checkpoint` (atomic, weights_only)
and hold everything needed to continue bit-for-bit on CPU: weights, optimizer, step, epoch, position in the
epoch, RNG states, config, vocabulary and versions. The data order of epoch e is a pure function of
(seed, e), so a resumed run visits the same batches as an uninterrupted one.
"""

from __future__ import annotations

import math
import platform
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from ..checkpoint import load_checkpoint, save_checkpoint
from ..config import typed
from ..data.layout import split_files, variant_props
from ..data.tokenize import BOS_ID, EOS_ID, PAD_ID, Vocab, detokenize, get_tokenizer
from ..errors import InputError
from ..io import atomic_write_lines, read_lines
from ..models.transformer import Seq2SeqTransformer, build_model, count_parameters
from .device import autocast, seed_everything, select_device

TRAIN_DEFAULTS: dict[str, Any] = {
    "seed": 0,
    "device": "auto",
    "amp": True,
    "batch_size": 64,
    "batch_tokens": 0,  # 0 = no token cap; else cap on padded (src + tgt) tokens per batch
    "epochs": 10,
    "max_steps": 0,  # 0 = no cap
    "max_minutes": 0.0,  # wall-clock cap of this invocation; 0 = none
    "optimizer": "adam",
    "lr": 5e-4,
    "betas": [0.9, 0.998],
    "weight_decay": 0.0,
    "schedule": "noam",  # noam (warmup then 1/sqrt decay to the peak lr) | constant (optional linear warmup)
    "warmup_steps": 400,
    "label_smoothing": 0.1,
    "grad_clip": 1.0,
    "eval_every": 200,
    "val_em_lines": 200,
    "early_stop_metric": "val_loss",  # or val_em
    "patience": 5,  # evaluations without improvement
    "num_threads": 0,  # 0 = leave torch's default
    "progress": True,
}
DATA_DEFAULTS: dict[str, Any] = {
    "tokenizer": "auto",
    "train_split": "train",
    "valid_split": "valid",
    "max_src_tokens": 1000,
    "max_tgt_tokens": 200,
    "limit_train": 0,
    "limit_valid": 0,
}
DECODE_DEFAULTS: dict[str, Any] = {"beam": 10, "max_len": 200, "batch_size": 32, "length_penalty": 0.0}


def _section(cfg: dict[str, Any], name: str, defaults: dict[str, Any]) -> dict[str, Any]:
    return {**defaults, **(cfg.get(name) or {})}


def tokenizer_name(dcfg: dict[str, Any]) -> str:
    """``auto`` follows the variant name: F variants are formulas, S variants SMILES."""
    name = dcfg.get("tokenizer", "auto")
    if name != "auto":
        return name
    variant = dcfg.get("variant")
    if not variant:
        raise InputError("data.tokenizer is 'auto' but data.variant is not set")
    return str(variant_props(variant)["repr"])


# --------------------------------------------------------------------------- data
@dataclass
class Pairs:
    """Encoded examples (without specials) plus what was dropped for being too long."""

    src: list[list[int]]
    tgt: list[list[int]]
    dropped: int = 0


def read_pairs(src_path: Path, tgt_path: Path, limit: int = 0) -> tuple[list[str], list[str]]:
    for p in (src_path, tgt_path):
        if not Path(p).exists():
            raise InputError("data file not found", path=str(p))
    src, tgt = read_lines(src_path), read_lines(tgt_path)
    if len(src) != len(tgt):
        raise InputError(f"{len(src)} source lines but {len(tgt)} target lines in {tgt_path}", path=str(src_path))
    if limit:
        src, tgt = src[:limit], tgt[:limit]
    return src, tgt


def encode_pairs(src: Sequence[str], tgt: Sequence[str], tok, vocab: Vocab, max_src: int, max_tgt: int) -> Pairs:
    """Pairs longer than the limits are dropped (never truncated: a cut target would teach a wrong answer)."""
    out = Pairs([], [])
    for s, t in zip(src, tgt, strict=True):
        si, ti = vocab.encode(tok(s)), vocab.encode(tok(t))
        if len(si) > max_src or len(ti) > max_tgt:
            out.dropped += 1
            continue
        out.src.append(si)
        out.tgt.append(ti)
    return out


def pad_batch(seqs: Sequence[Sequence[int]], device: torch.device | str = "cpu") -> Tensor:
    n = max(1, max(len(s) for s in seqs))
    out = torch.full((len(seqs), n), PAD_ID, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.as_tensor(s, dtype=torch.long)
    return out.to(device)


def make_batches(
    pairs: Pairs, batch_size: int, batch_tokens: int, seed: int, epoch: int, shuffle: bool = True
) -> list[list[int]]:
    """Length-bucketed batches whose order depends only on (seed, epoch), so resume replays it exactly."""
    n = len(pairs.src)
    g = torch.Generator().manual_seed(seed * 100_003 + epoch)
    order = torch.randperm(n, generator=g).tolist() if shuffle else list(range(n))
    pool = max(batch_size * 50, 1)
    batches: list[list[int]] = []
    for p0 in range(0, n, pool):
        chunk = sorted(order[p0 : p0 + pool], key=lambda i: (len(pairs.src[i]), len(pairs.tgt[i])))
        cur: list[int] = []
        longest = 0
        for i in chunk:
            ln = len(pairs.src[i]) + len(pairs.tgt[i]) + 2
            if cur and (len(cur) >= batch_size or (batch_tokens and max(longest, ln) * (len(cur) + 1) > batch_tokens)):
                batches.append(cur)
                cur, longest = [], 0
            cur.append(i)
            longest = max(longest, ln)
        if cur:
            batches.append(cur)
    if shuffle:
        perm = torch.randperm(len(batches), generator=g).tolist()
        batches = [batches[i] for i in perm]
    return batches


def collate(pairs: Pairs, idx: Sequence[int], device: torch.device) -> tuple[Tensor, Tensor, Tensor]:
    """(src, tgt_in = <s> y, tgt_out = y </s>), padded."""
    src = pad_batch([pairs.src[i] for i in idx], device)
    tgt_in = pad_batch([[BOS_ID] + pairs.tgt[i] for i in idx], device)
    tgt_out = pad_batch([pairs.tgt[i] + [EOS_ID] for i in idx], device)
    return src, tgt_in, tgt_out


def seq2seq_loss(logits: Tensor, tgt_out: Tensor, label_smoothing: float = 0.0) -> Tensor:
    """Mean token cross-entropy over non-padding positions: padding never counts, whatever its logits."""
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]).float(),
        tgt_out.reshape(-1),
        ignore_index=PAD_ID,
        label_smoothing=label_smoothing,
    )


# --------------------------------------------------------------------------- metrics
def bag_key(line: str) -> tuple[str, ...]:
    """Order-free form of a benchmark line: each side is shuffled, so EM must not depend on term order.

    A term is ``{k}MOL``; a ``.`` not followed by ``{`` stays inside the molecule (multi-fragment SMILES).
    """
    terms: list[str] = []
    for part in line.split("."):
        if terms and not part.startswith("{"):
            terms[-1] += "." + part
        else:
            terms.append(part)
    return tuple(sorted(terms))


def exact_match(pred: str, gold: str) -> bool:
    return bag_key(pred) == bag_key(gold)


# --------------------------------------------------------------------------- schedule / state
def lr_at(step: int, tcfg: dict[str, Any]) -> float:
    """Learning rate for the 1-based ``step``."""
    peak, warm = float(tcfg["lr"]), int(tcfg.get("warmup_steps") or 0)
    s = max(step, 1)
    if tcfg.get("lr_schedule", "noam") == "noam" and warm > 0:
        return peak * min(s / warm, math.sqrt(warm / s))
    if warm > 0 and s < warm:
        return peak * s / warm
    return peak


def _rng_state() -> tuple[dict[str, Any], dict[str, Tensor]]:
    """Python/NumPy states as JSON-able lists, torch states as tensors (both weights_only-safe)."""
    py = random.getstate()
    np_state = np.random.get_state()
    plain = {
        "python": [py[0], list(py[1]), py[2]],
        "numpy": [np_state[0], np_state[1].tolist(), int(np_state[2]), int(np_state[3]), float(np_state[4])],
    }
    tensors = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        for i, s in enumerate(torch.cuda.get_rng_state_all()):
            tensors[f"cuda{i}"] = s
    return plain, tensors


def _set_rng_state(plain: dict[str, Any], tensors: dict[str, Tensor]) -> None:
    if "python" in plain:
        v, st, g = plain["python"]
        random.setstate((v, tuple(st), g))
    if "numpy" in plain:
        name, keys, pos, has_g, cached = plain["numpy"]
        np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_g, cached))
    if "torch" in tensors:
        torch.set_rng_state(tensors["torch"].cpu())
    if torch.cuda.is_available():
        cuda = [tensors[f"cuda{i}"].cpu() for i in range(torch.cuda.device_count()) if f"cuda{i}" in tensors]
        if len(cuda) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all(cuda)


def versions() -> dict[str, str]:
    from .. import __version__ as pkg_version  # noqa: PLC0415

    return {
        "gnn_chemalgebra": str(pkg_version),
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
    }


# --------------------------------------------------------------------------- loaded model
@dataclass
class LoadedModel:
    """A model ready to decode, with the tokenizer and vocabulary it was trained with."""

    model: Seq2SeqTransformer
    vocab: Vocab
    tokenizer: str
    config: dict[str, Any]
    device: torch.device

    def tokenize(self, line: str) -> list[str]:
        return get_tokenizer(self.tokenizer)(line)


def load_model(path: str | Path, device: str | torch.device = "cpu") -> LoadedModel:
    """Load a transformer checkpoint (``last.pt`` or ``best.pt``) for prediction, weights_only."""
    dev = select_device(str(device)) if isinstance(device, str) else device
    ck = load_checkpoint(path, map_location="cpu")
    meta = ck.get("meta") or {}
    if meta.get("model") != "transformer" or "vocab" not in meta:
        raise InputError("not a transformer checkpoint (no vocabulary in it)", path=str(path))
    vocab = Vocab(list(meta["vocab"]))
    model = Seq2SeqTransformer(**meta["hparams"])
    model.load_state_dict(ck["model"])
    model.to(dev).eval()
    return LoadedModel(model, vocab, meta["tokenizer"], ck.get("config") or {}, dev)


def _decode_batch(
    lm: LoadedModel, lines: Sequence[str], beam: int, max_len: int, length_penalty: float = 0.0
) -> list[list[str]]:
    src = pad_batch([lm.vocab.encode(lm.tokenize(s)) for s in lines], lm.device)
    with autocast(lm.device):
        if beam <= 1:
            outs = [[ids] for ids in lm.model.greedy(src, max_len)]
        else:
            outs = [[ids for ids, _ in hyps] for hyps in lm.model.beam_search(src, beam, max_len, length_penalty)]
    return [[detokenize(lm.vocab.decode(ids)) for ids in hyps] for hyps in outs]


def predict_lines(
    checkpoint_path_or_loaded: str | Path | LoadedModel,
    src_lines: list[str],
    beam: int = 1,
    max_len: int = 200,
    device: str | torch.device = "cpu",
    batch_size: int = 32,
    length_penalty: float = 0.0,
    progress: bool = False,
) -> list[list[str]]:
    """n-best target lines per source line (``beam`` of them, best first; one with greedy ``beam=1``)."""
    lm = (
        checkpoint_path_or_loaded
        if isinstance(checkpoint_path_or_loaded, LoadedModel)
        else load_model(checkpoint_path_or_loaded, device)
    )
    lm.model.eval()
    order = sorted(range(len(src_lines)), key=lambda i: len(src_lines[i]))  # less padding per batch
    out: list[list[str]] = [[] for _ in src_lines]
    bs = max(1, batch_size if beam <= 1 else max(1, batch_size * 4 // max(beam, 1)))
    chunks = [order[i : i + bs] for i in range(0, len(order), bs)]
    if progress:
        from tqdm import tqdm  # noqa: PLC0415

        chunks = tqdm(chunks, desc="decode", unit="batch")
    for chunk in chunks:
        hyps = _decode_batch(lm, [src_lines[i] for i in chunk], beam, max_len, length_penalty)
        for i, h in zip(chunk, hyps, strict=True):
            out[i] = h
    return out


def write_predictions(
    ckpt: str | Path | LoadedModel,
    src_path: str | Path,
    out_path: str | Path,
    beam: int = 10,
    max_len: int = 200,
    device: str | torch.device = "cpu",
    top1_path: str | Path | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Beam file (``beam`` consecutive lines per example, OpenNMT ``-n_best`` convention) and a top-1 file.

    The top-1 file defaults to ``<out stem>.top1<suffix>`` beside the beam file; with ``beam=1`` both are the
    same content. Returns paths, counts and decoding speed.
    """
    src = read_lines(src_path)
    t0 = time.perf_counter()
    nbest = predict_lines(ckpt, src, beam=beam, max_len=max_len, device=device, progress=progress)
    secs = time.perf_counter() - t0
    out_path = Path(out_path)
    width = max(beam, 1)
    lines: list[str] = []
    for hyps in nbest:
        hyps = (hyps + [""] * width)[:width]  # always exactly `width` lines per example
        lines.extend(hyps)
    atomic_write_lines(out_path, lines)
    top1 = Path(top1_path) if top1_path else out_path.with_name(out_path.stem + ".top1" + out_path.suffix)
    atomic_write_lines(top1, [h[0] if h else "" for h in nbest])
    return {
        "beam_file": str(out_path),
        "top1_file": str(top1),
        "n": len(src),
        "beam": width,
        "seconds": secs,
        "reactions_per_s": len(src) / secs if secs > 0 else float("nan"),
    }


# --------------------------------------------------------------------------- evaluation during training
@torch.no_grad()
def evaluate(
    model: Seq2SeqTransformer,
    pairs: Pairs,
    vocab: Vocab,
    device: torch.device,
    batch_size: int,
    em_lines: int,
    max_len: int,
) -> dict[str, float]:
    """Teacher-forced loss and token accuracy on all of valid; greedy EM on its first ``em_lines``."""
    model.eval()
    tot_loss, tot_tok, correct = 0.0, 0, 0
    for idx in make_batches(pairs, batch_size, 0, 0, 0, shuffle=False):
        src, tgt_in, tgt_out = collate(pairs, idx, device)
        with autocast(device):
            logits = model(src, tgt_in)
        mask = tgt_out.ne(PAD_ID)
        n = int(mask.sum())
        tot_loss += float(seq2seq_loss(logits, tgt_out)) * n
        correct += int((logits.argmax(-1).eq(tgt_out) & mask).sum())
        tot_tok += n
    res = {"val_loss": tot_loss / max(tot_tok, 1), "val_token_acc": 100.0 * correct / max(tot_tok, 1)}
    m = min(em_lines, len(pairs.src))
    if m:
        hits = 0
        for b0 in range(0, m, batch_size):
            ids = list(range(b0, min(m, b0 + batch_size)))
            src = pad_batch([pairs.src[i] for i in ids], device)
            with autocast(device):
                preds = model.greedy(src, max_len)
            for i, p in zip(ids, preds, strict=True):
                hits += exact_match(detokenize(vocab.decode(p)), detokenize(vocab.decode(pairs.tgt[i])))
        res["val_em"] = 100.0 * hits / m
    model.train()
    return res


# --------------------------------------------------------------------------- training
def _improved(metric: str, value: float, best: float | None) -> bool:
    if best is None:
        return True
    return value > best if metric == "val_em" else value < best


def train(cfg: dict[str, Any], resume: bool = False) -> dict[str, Any]:
    """Train (or continue from ``<run_dir>/last.pt``) and return a summary: best validation, speed, size."""
    cfg = typed(cfg, model_name="transformer").to_dict()
    dcfg = _section(cfg, "data", DATA_DEFAULTS)
    tcfg = _section(cfg, "train", TRAIN_DEFAULTS)
    decfg = _section(cfg, "decode", DECODE_DEFAULTS)
    mcfg = dict(cfg.get("model") or {})
    if not dcfg.get("dir") or not dcfg.get("variant"):
        raise InputError("config needs data.dir (built root) and data.variant (e.g. ChemAlgebra_F_T1_x1)")
    run_dir = Path(cfg.get("run_dir") or tcfg.get("run_dir") or "runs/transformer")  # top level, as the GNN
    run_dir.mkdir(parents=True, exist_ok=True)
    if tcfg["num_threads"]:
        torch.set_num_threads(int(tcfg["num_threads"]))
    device = select_device(str(tcfg["device"]))
    seed = int(tcfg["seed"])
    seed_everything(seed)
    tok_name = tokenizer_name(dcfg)
    tok = get_tokenizer(tok_name)

    root, variant = Path(dcfg["dir"]), str(dcfg["variant"])
    s_tr, t_tr, _ = split_files(root, variant, dcfg["train_split"])
    s_va, t_va, _ = split_files(root, variant, dcfg["val_split"])
    src_tr, tgt_tr = read_pairs(s_tr, t_tr, int(dcfg["limit"] or 0))
    src_va, tgt_va = read_pairs(s_va, t_va, int(dcfg["val_limit"] or 0))
    if not src_tr:
        raise InputError("no training examples", path=str(s_tr))

    last_path, best_path = run_dir / "last.pt", run_dir / "best.pt"
    ck: dict[str, Any] | None = None
    if resume and last_path.exists():
        ck = load_checkpoint(last_path)
        vocab = Vocab(list(ck["meta"]["vocab"]))
    else:
        if resume:
            print(f"[seq2seq] no {last_path} yet: starting fresh", file=sys.stderr)
        vocab = Vocab.build(tok(line) for line in [*src_tr, *tgt_tr])

    max_src, max_tgt = int(dcfg["max_src_tokens"]), int(dcfg["max_tgt_tokens"])
    train_pairs = encode_pairs(src_tr, tgt_tr, tok, vocab, max_src, max_tgt)
    valid_pairs = encode_pairs(src_va, tgt_va, tok, vocab, max_src, max_tgt)

    model = build_model(len(vocab), mcfg).to(device)
    betas = tuple(float(b) for b in tcfg["betas"])
    opt = torch.optim.Adam(model.parameters(), lr=lr_at(1, tcfg), betas=betas, weight_decay=float(tcfg["weight_decay"]))
    n_params = count_parameters(model)
    state = {
        "step": 0,
        "epoch": 0,
        "batch_in_epoch": 0,
        "best": None,
        "bad_evals": 0,
        "train_seconds": 0.0,
        "train_examples": 0,
        "train_tokens": 0,
        "history": [],
    }
    if ck is not None:
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optimizer"])
        state.update(ck["extra"]["state"])
        _set_rng_state(ck["extra"]["rng"], ck["rng_tensors"])

    meta = {
        "model": "transformer",
        "vocab": vocab.itos,
        "tokenizer": tok_name,
        "hparams": model.hparams,
        "variant": variant,
        "n_params": n_params,
        "dropped_train": train_pairs.dropped,
        "dropped_valid": valid_pairs.dropped,
    }

    def save(path: Path) -> None:
        plain, tensors = _rng_state()
        save_checkpoint(
            path,
            {
                "model": model.state_dict(),
                "optimizer": opt.state_dict(),
                "rng_tensors": tensors,
                "step": int(state["step"]),
                "epoch": int(state["epoch"]),
                "config": cfg,
                "meta": meta,
                "versions": versions(),
                "extra": {"state": state, "rng": plain},
            },
        )

    from torch.utils.tensorboard import SummaryWriter  # noqa: PLC0415  (slow import, only when training)
    from tqdm import tqdm  # noqa: PLC0415

    writer = SummaryWriter(str(run_dir / "tb"), purge_step=int(state["step"]) + 1 if ck is not None else None)
    max_steps, epochs = int(tcfg["max_steps"] or 0), int(tcfg["epochs"] or 0)
    eval_every = max(1, int(tcfg["eval_every"]))
    budget = float(tcfg["max_minutes"] or 0) * 60.0
    ls, clip = float(tcfg["label_smoothing"]), float(tcfg["grad_clip"] or 0)
    metric, patience = str(tcfg["monitor"]), int(tcfg["patience"] or 0)
    t_start = time.perf_counter()
    stop_reason = "epochs"
    last_eval: dict[str, float] = {}
    total = max_steps or None
    bar = tqdm(
        total=total,
        initial=int(state["step"]),
        disable=not tcfg["progress"],
        desc="train",
        unit="step",
        dynamic_ncols=True,
    )

    def run_eval() -> bool:
        """Evaluate, log, checkpoint; True when early stopping triggers."""
        nonlocal last_eval
        res = (
            evaluate(
                model,
                valid_pairs,
                vocab,
                device,
                int(decfg["batch_size"]),
                int(tcfg["val_em_lines"]),
                int(decfg["max_len"]),
            )
            if valid_pairs.src
            else {}
        )
        last_eval = res
        step = int(state["step"])
        for k, v in res.items():
            writer.add_scalar(k.replace("val_", "val/"), v, step)
        stop = False
        if metric in res:
            if _improved(metric, res[metric], state["best"]):
                state["best"], state["bad_evals"] = res[metric], 0
                state["best_step"] = step
                state["best_eval"] = res
                save(best_path)
            else:
                state["bad_evals"] += 1
                stop = bool(patience) and state["bad_evals"] >= patience
        state["history"].append({"step": step, **res})
        save(last_path)
        writer.flush()
        bar.set_postfix({k: round(v, 3) for k, v in res.items()})
        return stop

    model.train()
    done = False
    while not done:
        if epochs and state["epoch"] >= epochs:
            stop_reason = "epochs"
            break
        batches = make_batches(
            train_pairs, int(tcfg["batch_size"]), int(tcfg["batch_tokens"] or 0), seed, int(state["epoch"])
        )
        while state["batch_in_epoch"] < len(batches):
            idx = batches[state["batch_in_epoch"]]
            t0 = time.perf_counter()
            src, tgt_in, tgt_out = collate(train_pairs, idx, device)
            step = int(state["step"]) + 1
            for g in opt.param_groups:
                g["lr"] = lr_at(step, tcfg)
            with autocast(device, bool(tcfg["amp"])):
                logits = model(src, tgt_in)
            loss = seq2seq_loss(logits, tgt_out, ls)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            opt.step()
            state["step"] = step
            state["batch_in_epoch"] += 1
            state["train_seconds"] += time.perf_counter() - t0
            state["train_examples"] += len(idx)
            state["train_tokens"] += int(tgt_out.ne(PAD_ID).sum()) + int(src.ne(PAD_ID).sum())
            bar.update(1)
            if step % 20 == 0:
                writer.add_scalar("train/loss", float(loss.detach()), step)
                writer.add_scalar("train/lr", opt.param_groups[0]["lr"], step)
            if step % eval_every == 0 and run_eval():
                stop_reason, done = "early_stopping", True
                break
            if max_steps and step >= max_steps:
                stop_reason, done = "max_steps", True
                break
            if budget and time.perf_counter() - t_start >= budget:
                stop_reason, done = "max_minutes", True
                break
        else:
            state["epoch"] += 1
            state["batch_in_epoch"] = 0
    bar.close()
    if not state["history"] or state["history"][-1]["step"] != state["step"]:
        run_eval()  # the final weights are always evaluated and saved
    writer.close()
    secs = max(float(state["train_seconds"]), 1e-9)
    return {
        "model": "transformer",
        "variant": variant,
        "run_dir": str(run_dir),
        "last": str(last_path),
        "best": str(best_path) if best_path.exists() else None,
        "stop_reason": stop_reason,
        "step": int(state["step"]),
        "epoch": int(state["epoch"]),
        "best_metric": metric,
        "best_value": state["best"],
        "best_step": state.get("best_step"),
        "best_eval": state.get("best_eval"),
        "last_eval": last_eval,
        "params": n_params,
        "vocab_size": len(vocab),
        "train_examples": len(train_pairs.src),
        "dropped_train": train_pairs.dropped,
        "train_reactions_per_s": state["train_examples"] / secs,
        "train_tokens_per_s": state["train_tokens"] / secs,
        "train_seconds": secs,
        "device": str(device),
        "resumed": ck is not None,
    }
