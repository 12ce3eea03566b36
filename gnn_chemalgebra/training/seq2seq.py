"""Training and prediction of the sequence-Transformer baseline under the project's harness.

``gnnca train`` (:func:`.run.train`) runs :class:`TransformerTask` on the engine (:mod:`.engine`: schedule,
budgets, early stopping, checkpoints, exact resume also inside an epoch); ``gnnca predict`` calls
:func:`predict_lines`. The data order of epoch e is a pure function of (seed, e), so a resumed run visits the same
batches as an uninterrupted one.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from ..checkpoint import load_checkpoint
from ..config import Config
from ..data.layout import split_files, variant_props
from ..data.tokenize import BOS_ID, EOS_ID, PAD_ID, Vocab, detokenize, get_tokenizer, reserved_tokens, tokenizer_for
from ..device import autocast, select_device
from ..errors import InputError
from ..io import atomic_write_lines, read_lines
from ..kinds import kind_name_of_checkpoint
from ..models.transformer import Seq2SeqTransformer, build_model, count_parameters
from . import distributed
from .task import Task


def tokenizer_name(dcfg: dict[str, Any], level: str = "paper") -> str:
    """The tokenizer of a run: ``data.tokenizer`` (``auto`` follows the variant name: F variants are formulas, S
    variants SMILES) at the coefficient level ``model.tokenizer`` (``paper``: ``{k}`` one token; ``digit``)."""
    name = dcfg.get("tokenizer", "auto")
    if name == "auto":
        variant = dcfg.get("variant")
        if not variant:
            raise InputError("data.tokenizer is 'auto' but data.variant is not set")
        name = str(variant_props(variant)["repr"])
    if name.endswith("_digit"):  # a digit-level name given in data.tokenizer says the level itself
        level = "digit"
    return tokenizer_for(name, level)


def sorted_terms(line: str) -> str:
    """A benchmark line with its terms in sorted order (a canonical target: EM ignores the order anyway)."""
    return ".".join(bag_key(line))


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
    return model_from_checkpoint(load_checkpoint(path, map_location="cpu"), path, device)


def model_from_checkpoint(ck: dict[str, Any], path: str | Path, device: str | torch.device = "cpu") -> LoadedModel:
    """:func:`load_model` from checkpoint entries already loaded (``path`` names them in messages)."""
    dev = select_device(str(device)) if isinstance(device, str) else device
    meta = ck.get("meta") or {}
    if kind_name_of_checkpoint(ck) != "transformer" or "vocab" not in meta:
        raise InputError("not a transformer checkpoint (no vocabulary in it)", path=str(path))
    vocab = Vocab(list(meta["vocab"]))
    model = Seq2SeqTransformer(**meta["hparams"])
    model.load_state_dict(ck["model"])
    model.to(dev).eval()
    return LoadedModel(model, vocab, meta["tokenizer"], ck.get("config") or {}, dev)


def load_network(ck: dict[str, Any], path: str | Path, device: str | torch.device = "cpu") -> Seq2SeqTransformer:
    """The Transformer of loaded checkpoint entries, in eval mode (the registry's loader for ``transformer``)."""
    return model_from_checkpoint(ck, path, device).model


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
class TransformerTask(Task):
    """Token sequences, teacher-forced cross-entropy; validation loss, token accuracy and greedy EM."""

    name = "transformer"

    def build(self, cfg: Config, device: torch.device, ck: dict[str, Any] | None, gen: torch.Generator,
              dist_info: distributed.DistInfo) -> None:  # fmt: skip
        d, self.cfg, self.device = cfg.data, cfg, device
        if not d.dir or not d.variant:
            raise InputError("config needs data.dir (built root) and data.variant (e.g. ChemAlgebra_F_T1_x1)")
        self.tok_name = tokenizer_name(vars(d), cfg.model.tokenizer)
        saved = ((ck or {}).get("meta") or {}).get("tokenizer")
        if saved is not None and saved != self.tok_name:
            raise InputError(f"the checkpoint was trained with tokenizer {saved!r}, the config asks for "
                             f"{self.tok_name!r} (data.tokenizer / model.tokenizer)")  # fmt: skip
        tok = get_tokenizer(self.tok_name)
        root, self.variant = Path(d.dir), str(d.variant)
        s_tr, t_tr, _ = split_files(root, self.variant, d.train_split)
        s_va, t_va, _ = split_files(root, self.variant, d.val_split)
        src_tr, tgt_tr = read_pairs(s_tr, t_tr, d.limit)
        src_va, tgt_va = read_pairs(s_va, t_va, d.val_limit)
        if not src_tr:
            raise InputError("no training examples", path=str(s_tr))
        if d.sort_targets:
            tgt_tr, tgt_va = [sorted_terms(t) for t in tgt_tr], [sorted_terms(t) for t in tgt_va]
        if ck is not None:
            self.vocab = Vocab(list(ck["meta"]["vocab"]))
        else:
            lines = [*src_tr, *tgt_tr]
            self.vocab = Vocab.build((tok(line) for line in lines), reserved=reserved_tokens(self.tok_name))
        self.train_pairs = encode_pairs(src_tr, tgt_tr, tok, self.vocab, d.max_src_tokens, d.max_tgt_tokens)
        self.valid_pairs = encode_pairs(src_va, tgt_va, tok, self.vocab, d.max_src_tokens, d.max_tgt_tokens)
        self.model = build_model(len(self.vocab), vars(cfg.model)).to(device)
        self.net = distributed.wrap(self.model, dist_info, device)
        self.rank, self.world = dist_info.rank, dist_info.world_size
        self.train_tokens = int((ck or {}).get("meta", {}).get("train_tokens", 0))
        t = cfg.train
        self.batch_size, self.batch_tokens, self.seed = t.batch_size, t.batch_tokens, t.seed
        self.label_smoothing, self.amp = t.label_smoothing, t.amp
        # train.fast_train: cheap dropout masks in the model's training forward and Adam's fused kernel (both
        # change the floating-point trajectory, not the function; off by default so older runs resume as begun)
        self.model.fast_train = self.fused_optimizer = bool(t.fast_train)

    def _batches(self, epoch: int) -> list[list[int]]:
        """This rank's batches: under torchrun rank r takes every N-th (all ranks the same count, for DDP)."""
        batches = make_batches(self.train_pairs, self.batch_size, self.batch_tokens, self.seed, epoch)
        if self.world == 1:
            return batches
        return batches[: len(batches) // self.world * self.world][self.rank :: self.world]

    def steps_per_epoch(self) -> int:
        return len(self._batches(0))

    def train_batches(self, epoch: int) -> Iterable[Any]:
        return self._batches(epoch)

    def train_step(self, batch: Any) -> tuple[dict[str, Tensor], int]:
        src, tgt_in, tgt_out = collate(self.train_pairs, batch, self.device)
        with autocast(self.device, self.amp):
            logits = self.net(src, tgt_in)
        self.train_tokens += int(tgt_out.ne(PAD_ID).sum()) + int(src.ne(PAD_ID).sum())
        return {"total": seq2seq_loss(logits, tgt_out, self.label_smoothing)}, len(batch)

    def validate(self) -> dict[str, float]:
        if not self.valid_pairs.src:
            return {}
        dec = self.cfg.decode
        return evaluate(self.model, self.valid_pairs, self.vocab, self.device, dec.batch_size,
                        self.cfg.train.val_em_lines, dec.max_len)  # fmt: skip

    def checkpoint_entries(self) -> dict[str, Any]:
        meta = {
            "model": "transformer",
            "vocab": self.vocab.itos,
            "tokenizer": self.tok_name,
            "hparams": self.model.hparams,
            "variant": self.variant,
            "n_params": count_parameters(self.model),
            "dropped_train": self.train_pairs.dropped,
            "dropped_valid": self.valid_pairs.dropped,
            "train_tokens": self.train_tokens,
        }
        return {"meta": meta}

    def summary(self, result: dict[str, Any]) -> dict[str, Any]:
        best = Path(result["run_dir"]) / "best.pt"
        return {
            "variant": self.variant,
            "best": str(best) if best.exists() else None,  # the path, as this trainer always returned
            "best_metric": result["monitor"],
            "params": count_parameters(self.model),
            "vocab_size": len(self.vocab),
            "tokenizer": self.tok_name,
            "n_train": len(self.train_pairs.src),
            "n_val": len(self.valid_pairs.src),
            "train_examples": len(self.train_pairs.src),
            "dropped_train": self.train_pairs.dropped,
            "train_tokens_per_s": self.train_tokens / result["train_seconds"],
        }
