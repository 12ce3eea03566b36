"""Sequence-to-sequence Transformer baseline (the paper's Molecular-Transformer-style model, §6).

Built from ``torch.nn`` Transformer layers (pre-norm, as OpenNMT uses), shared or separate embeddings,
sinusoidal or learned positions, and greedy and batched beam decoding that stop at ``</s>``.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..data.tokenize import BOS_ID, EOS_ID, PAD_ID
from .blocks import cheap_dropout

MODEL_KEYS: tuple[str, ...] = (
    "d_model",
    "nhead",
    "enc_layers",
    "dec_layers",
    "d_ff",
    "dropout",
    "share_embeddings",
    "positional",
    "max_positions",
)


class SinusoidalPositions(nn.Module):
    """Fixed sin/cos positions; the table grows on demand so long inputs never fail."""

    def __init__(self, d_model: int, max_positions: int = 1024) -> None:
        super().__init__()
        self.d_model = d_model
        self.register_buffer("table", self._make(max_positions), persistent=False)

    def _make(self, n: int) -> Tensor:
        pos = torch.arange(n, dtype=torch.float32).unsqueeze(1)
        div = torch.exp(torch.arange(0, self.d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / self.d_model))
        pe = torch.zeros(n, self.d_model)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div[: self.d_model // 2])
        return pe

    def forward(self, length: int) -> Tensor:
        if length > self.table.shape[0]:
            self.table = self._make(2 * length).to(self.table.device)
        return self.table[:length]


class LearnedPositions(nn.Module):
    def __init__(self, d_model: int, max_positions: int = 1024) -> None:
        super().__init__()
        self.emb = nn.Embedding(max_positions, d_model)

    def forward(self, length: int) -> Tensor:
        if length > self.emb.num_embeddings:
            raise ValueError(f"sequence of {length} tokens exceeds learned positions ({self.emb.num_embeddings})")
        return self.emb.weight[:length]


class Seq2SeqTransformer(nn.Module):
    """Encoder-decoder over token ids; ``forward`` returns logits for teacher forcing."""

    def __init__(
        self,
        src_vocab: int,
        tgt_vocab: int,
        d_model: int = 512,
        nhead: int = 8,
        enc_layers: int = 6,
        dec_layers: int = 6,
        d_ff: int = 512,
        dropout: float = 0.1,
        share_embeddings: bool = True,
        positional: str = "sinusoidal",
        max_positions: int = 1024,
    ) -> None:
        super().__init__()
        self.hparams: dict[str, Any] = {
            "src_vocab": src_vocab,
            "tgt_vocab": tgt_vocab,
            "d_model": d_model,
            "nhead": nhead,
            "enc_layers": enc_layers,
            "dec_layers": dec_layers,
            "d_ff": d_ff,
            "dropout": dropout,
            "share_embeddings": share_embeddings,
            "positional": positional,
            "max_positions": max_positions,
        }
        if share_embeddings and src_vocab != tgt_vocab:
            raise ValueError("shared embeddings need one vocabulary for source and target")
        self.d_model = d_model
        self.src_emb = nn.Embedding(src_vocab, d_model, padding_idx=PAD_ID)
        self.tgt_emb = self.src_emb if share_embeddings else nn.Embedding(tgt_vocab, d_model, padding_idx=PAD_ID)
        if positional == "sinusoidal":
            self.pos: nn.Module = SinusoidalPositions(d_model, max_positions)
        elif positional == "learned":
            self.pos = LearnedPositions(d_model, max_positions)
        else:
            raise ValueError(f"positional must be 'sinusoidal' or 'learned', not {positional!r}")
        self.drop = nn.Dropout(dropout)
        enc_layer = nn.TransformerEncoderLayer(d_model, nhead, d_ff, dropout, batch_first=True, norm_first=True)
        dec_layer = nn.TransformerDecoderLayer(d_model, nhead, d_ff, dropout, batch_first=True, norm_first=True)
        self.transformer = nn.Transformer(
            d_model,
            nhead,
            custom_encoder=nn.TransformerEncoder(
                enc_layer, enc_layers, norm=nn.LayerNorm(d_model), enable_nested_tensor=False
            ),
            custom_decoder=nn.TransformerDecoder(dec_layer, dec_layers, norm=nn.LayerNorm(d_model)),
            batch_first=True,
        )
        self.generator = nn.Linear(d_model, tgt_vocab)
        if share_embeddings:
            self.generator.weight = self.tgt_emb.weight
        # Training-mode fast path (train.fast_train, off by default): the same layers and parameters run by
        # :meth:`_fast_forward`, with dropout masks from :func:`~.blocks.cheap_dropout` (16-bit integer draws,
        # ~4x cheaper than ``bernoulli_``; the attention-weight masks are most of a step's dropout on SMILES).
        # Not an hparam: eval mode and decoding never use it, so predictions do not depend on it.
        self.fast_train = False
        self._reset()

    def _reset(self) -> None:
        for name, p in self.named_parameters():
            if p.dim() > 1 and "pos" not in name:
                nn.init.xavier_uniform_(p)
        with torch.no_grad():
            self.src_emb.weight[PAD_ID].zero_()
            self.tgt_emb.weight[PAD_ID].zero_()

    def _embed(self, emb: nn.Embedding, ids: Tensor) -> Tensor:
        return self.drop(emb(ids) * math.sqrt(self.d_model) + self.pos(ids.shape[1]))

    def encode(self, src: Tensor) -> tuple[Tensor, Tensor]:
        """Memory and its padding mask (True = padding), reused by every decoding step."""
        pad = src.eq(PAD_ID)
        mem = self.transformer.encoder(self._embed(self.src_emb, src), src_key_padding_mask=pad)
        return mem, pad

    def decode(self, tgt_in: Tensor, mem: Tensor, mem_pad: Tensor) -> Tensor:
        """Logits for every position of ``tgt_in`` under a causal mask."""
        n = tgt_in.shape[1]
        causal = torch.triu(torch.ones(n, n, dtype=torch.bool, device=tgt_in.device), diagonal=1)
        h = self.transformer.decoder(
            self._embed(self.tgt_emb, tgt_in),
            mem,
            tgt_mask=causal,
            tgt_is_causal=True,
            tgt_key_padding_mask=tgt_in.eq(PAD_ID),
            memory_key_padding_mask=mem_pad,
        )
        return self.generator(h)

    def forward(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        if self.fast_train and self.training:
            return self._fast_forward(src, tgt_in)
        mem, pad = self.encode(src)
        return self.decode(tgt_in, mem, pad)

    # ------------------------------------------------------------------ training fast path
    def _fast_forward(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        """Teacher-forced logits as :meth:`forward` computes them (pre-norm layers of ``nn.Transformer``, same
        parameters, same places of dropout), with :func:`cheap_dropout` masks and the attention written out
        (``nn.MultiheadAttention``'s packed projections, key-padding and causal masks as additive -inf)."""
        enc, dec = self.transformer.encoder, self.transformer.decoder
        x = cheap_dropout(self.src_emb(src) * math.sqrt(self.d_model) + self.pos(src.shape[1]), self.drop.p)
        mem_bias = _pad_bias(src.eq(PAD_ID), x.dtype)
        for layer in enc.layers:
            x = x + cheap_dropout(_attention(layer.self_attn, layer.norm1(x), None, mem_bias), layer.dropout1.p)
            x = x + cheap_dropout(_feed_forward(layer, layer.norm2(x)), layer.dropout2.p)
        mem = enc.norm(x) if enc.norm is not None else x
        n = tgt_in.shape[1]
        y = cheap_dropout(self.tgt_emb(tgt_in) * math.sqrt(self.d_model) + self.pos(n), self.drop.p)
        causal = torch.full((n, n), float("-inf"), dtype=y.dtype, device=y.device).triu_(1)
        self_bias = _pad_bias(tgt_in.eq(PAD_ID), y.dtype) + causal
        for layer in dec.layers:
            y = y + cheap_dropout(_attention(layer.self_attn, layer.norm1(y), None, self_bias), layer.dropout1.p)
            y = y + cheap_dropout(_attention(layer.multihead_attn, layer.norm2(y), mem, mem_bias), layer.dropout2.p)
            y = y + cheap_dropout(_feed_forward(layer, layer.norm3(y)), layer.dropout3.p)
        if dec.norm is not None:
            y = dec.norm(y)
        return self.generator(y)

    # ------------------------------------------------------------------ decoding
    def start_cache(self, mem: Tensor, mem_pad: Tensor) -> DecodeCache:
        """An empty decoding cache for ``mem``: each decoder layer's memory keys and values, projected once."""
        n, s, e = mem.shape
        mem_k, mem_v = [], []
        for layer in self.transformer.decoder.layers:
            mha = layer.multihead_attn
            b = mha.in_proj_bias
            k, v = F.linear(mem, mha.in_proj_weight[e:], None if b is None else b[e:]).chunk(2, -1)
            mem_k.append(_heads(k, mha.num_heads).contiguous())
            mem_v.append(_heads(v, mha.num_heads).contiguous())
        empty = mem.new_empty(n, self.hparams["nhead"], 0, e // self.hparams["nhead"])
        n_layers = len(mem_k)
        return DecodeCache([empty] * n_layers, [empty] * n_layers, mem_k, mem_v, ~mem_pad[:, None, None])

    def decode_step(
        self, tok: Tensor, cache: DecodeCache | None, mem: Tensor | None = None, mem_pad: Tensor | None = None
    ) -> tuple[Tensor, DecodeCache]:
        """Logits of the next token given the newest token ``tok`` (N,) and a cache of earlier positions.

        Pre-norm layers make this exact: position t of layer l only attends to the keys and values of the
        normed layer-l inputs of positions <= t, which never change, so each step projects only its own token
        (and the memory's keys and values are projected once, in :meth:`start_cache`). Rows of a batch are
        independent, so a beam reorders the cache and greedy drops finished rows by indexing it
        (:meth:`DecodeCache.select`). Eval mode only (no dropout). ``mem``/``mem_pad``: only for the first step.
        """
        if cache is None:
            if mem is None or mem_pad is None:
                raise ValueError("the first decoding step needs the memory and its padding mask")
            cache = self.start_cache(mem, mem_pad)
        t = cache.keys[0].shape[2]
        x = self.tgt_emb(tok[:, None]) * math.sqrt(self.d_model) + self.pos(t + 1)[t]
        keys, values = [], []
        dec = self.transformer.decoder
        for i, layer in enumerate(dec.layers):
            sa, ca = layer.self_attn, layer.multihead_attn
            q, k, v = F.linear(layer.norm1(x), sa.in_proj_weight, sa.in_proj_bias).chunk(3, -1)
            keys.append(torch.cat([cache.keys[i], _heads(k, sa.num_heads)], 2))
            values.append(torch.cat([cache.values[i], _heads(v, sa.num_heads)], 2))
            a = F.scaled_dot_product_attention(_heads(q, sa.num_heads), keys[i], values[i])
            x = x + sa.out_proj(_merge(a))
            e = ca.embed_dim
            b = ca.in_proj_bias
            q = F.linear(layer.norm2(x), ca.in_proj_weight[:e], None if b is None else b[:e])
            a = F.scaled_dot_product_attention(
                _heads(q, ca.num_heads), cache.mem_keys[i], cache.mem_values[i], attn_mask=cache.mem_mask
            )
            x = x + ca.out_proj(_merge(a))
            x = x + layer.linear2(layer.activation(layer.linear1(layer.norm3(x))))
        if dec.norm is not None:
            x = dec.norm(x)
        return self.generator(x[:, 0]), DecodeCache(keys, values, cache.mem_keys, cache.mem_values, cache.mem_mask)

    @torch.no_grad()
    def greedy(self, src: Tensor, max_len: int = 200, use_cache: bool = True) -> list[list[int]]:
        """Argmax decoding, batched; each row stops at its own ``</s>`` (not included in the output).

        With the cache (eval mode), a row that wrote ``</s>`` leaves the batch, so the later steps only
        compute the rows still decoding; ``use_cache=False`` recomputes every prefix in full (the reference).
        """
        mem, pad = self.encode(src)
        b, dev = src.shape[0], src.device
        if not use_cache or self.training:
            ys = torch.full((b, 1), BOS_ID, dtype=torch.long, device=dev)
            done = torch.zeros(b, dtype=torch.bool, device=dev)
            for _ in range(max_len):
                nxt = self.decode(ys, mem, pad)[:, -1].float().argmax(-1)
                nxt = torch.where(done, torch.full_like(nxt, PAD_ID), nxt)
                ys = torch.cat([ys, nxt[:, None]], 1)
                done |= nxt.eq(EOS_ID)
                if bool(done.all()):
                    break
            return [_strip(row) for row in ys[:, 1:].tolist()]
        out = torch.full((b, max_len), PAD_ID, dtype=torch.long, device=dev)
        rows = torch.arange(b, device=dev)  # the batch rows still decoding
        tok = torch.full((b,), BOS_ID, dtype=torch.long, device=dev)
        cache = self.start_cache(mem, pad)
        for t in range(max_len):
            logits, cache = self.decode_step(tok, cache)
            tok = logits.float().argmax(-1)
            out[rows, t] = tok
            ended = tok.eq(EOS_ID)
            if bool(ended.any()):
                live = (~ended).nonzero().squeeze(1)
                if live.numel() == 0:
                    break
                rows, tok, cache = rows[live], tok[live], cache.select(live)
        return [_strip(row) for row in out.tolist()]

    @torch.no_grad()
    def beam_search(
        self,
        src: Tensor,
        beam: int = 10,
        max_len: int = 200,
        length_penalty: float = 0.0,
        use_cache: bool = True,
    ) -> list[list[tuple[list[int], float]]]:
        """Batched beam search: per input, ``beam`` hypotheses (ids, log-prob score), best first.

        A finished hypothesis is frozen (it may only extend with padding at zero cost), so with ``beam=1``
        this is exactly greedy decoding. ``length_penalty`` alpha > 0 ranks by score / len**alpha at the end.
        """
        b, dev = src.shape[0], src.device
        mem, pad = self.encode(src)
        k = beam
        cached = use_cache and not self.training
        cache = self.start_cache(mem, pad).select(torch.arange(b, device=dev).repeat_interleave(k)) if cached else None
        mem = mem.repeat_interleave(k, 0)
        pad = pad.repeat_interleave(k, 0)
        ys = torch.full((b * k, 1), BOS_ID, dtype=torch.long, device=dev)
        scores = torch.full((b, k), float("-inf"), device=dev)
        scores[:, 0] = 0.0  # only one live beam at the start, so beams do not duplicate
        scores = scores.view(-1)
        done = torch.zeros(b * k, dtype=torch.bool, device=dev)
        lengths = torch.zeros(b * k, dtype=torch.long, device=dev)
        for _ in range(max_len):
            if cache is not None:
                logits, cache = self.decode_step(ys[:, -1], cache)
            else:
                logits = self.decode(ys, mem, pad)[:, -1]
            logp = torch.log_softmax(logits.float(), -1)
            v = logp.shape[-1]
            frozen = torch.full_like(logp, float("-inf"))
            frozen[:, PAD_ID] = 0.0
            logp = torch.where(done[:, None], frozen, logp)
            cand = (scores[:, None] + logp).view(b, k * v)
            top, idx = cand.topk(k, dim=-1)
            origin = (idx // v) + torch.arange(b, device=dev)[:, None] * k
            origin = origin.view(-1)
            tok = (idx % v).view(-1)
            ys = torch.cat([ys[origin], tok[:, None]], 1)
            if cache is not None:
                cache = cache.select(origin, memory=False)  # a beam stays with its input: same memory rows
            was_done = done[origin]
            lengths = lengths[origin] + (~was_done).long()
            done = was_done | tok.eq(EOS_ID)
            scores = top.view(-1)
            if bool(done.all()):
                break
        seqs = ys[:, 1:].tolist()
        final = scores.clone()
        if length_penalty > 0:
            final = final / lengths.clamp(min=1).float().pow(length_penalty)
        out: list[list[tuple[list[int], float]]] = []
        for i in range(b):
            rows = sorted(range(i * k, (i + 1) * k), key=lambda r: -float(final[r]))
            out.append([(_strip(seqs[r]), float(final[r])) for r in rows])
        return out


class DecodeCache(NamedTuple):
    """Per decoder layer: self-attention keys and values of the positions so far, (N, heads, t, head_dim),
    and the memory's keys and values (N, heads, S, head_dim); ``mem_mask`` (N, 1, 1, S) is True at real keys."""

    keys: list[Tensor]
    values: list[Tensor]
    mem_keys: list[Tensor]
    mem_values: list[Tensor]
    mem_mask: Tensor

    def select(self, rows: Tensor, memory: bool = True) -> DecodeCache:
        """The cache of batch rows ``rows`` (in that order); ``memory=False`` keeps the memory entries as they
        are (a beam reordered within its input, whose memory rows are all the same)."""
        keys = [c.index_select(0, rows) for c in self.keys]
        values = [c.index_select(0, rows) for c in self.values]
        if not memory:
            return DecodeCache(keys, values, self.mem_keys, self.mem_values, self.mem_mask)
        mk = [c.index_select(0, rows) for c in self.mem_keys]
        mv = [c.index_select(0, rows) for c in self.mem_values]
        return DecodeCache(keys, values, mk, mv, self.mem_mask.index_select(0, rows))


def _heads(x: Tensor, h: int) -> Tensor:
    """(N, L, E) -> (N, h, L, E / h)."""
    n, length, e = x.shape
    return x.reshape(n, length, h, e // h).transpose(1, 2)


def _merge(x: Tensor) -> Tensor:
    """(N, h, L, d) -> (N, L, h * d)."""
    n, h, length, d = x.shape
    return x.transpose(1, 2).reshape(n, length, h * d)


def _pad_bias(pad: Tensor, dtype: torch.dtype) -> Tensor:
    """(N, 1, 1, S) additive attention bias: -inf at padded keys, 0 elsewhere."""
    return torch.zeros(pad.shape, dtype=dtype, device=pad.device).masked_fill_(pad, float("-inf"))[:, None, None]


def _attention(mha: nn.MultiheadAttention, x: Tensor, kv: Tensor | None, bias: Tensor) -> Tensor:
    """``mha(x, kv, kv)`` in training mode (``kv=None``: self-attention), ``bias`` added to the scores, the
    attention weights dropped by :func:`cheap_dropout` at ``mha.dropout``. Batch-first (N, L, E)."""
    e, h = mha.embed_dim, mha.num_heads
    w, b = mha.in_proj_weight, mha.in_proj_bias
    if kv is None:
        q, k, v = F.linear(x, w, b).chunk(3, -1)
    else:
        q = F.linear(x, w[:e], None if b is None else b[:e])
        k, v = F.linear(kv, w[e:], None if b is None else b[e:]).chunk(2, -1)
    n, lq, lk = x.shape[0], x.shape[1], k.shape[1]
    q = q.reshape(n, lq, h, e // h).transpose(1, 2)
    k = k.reshape(n, lk, h, e // h).transpose(1, 2)
    v = v.reshape(n, lk, h, e // h).transpose(1, 2)
    scores = torch.matmul(q, k.transpose(-2, -1)).mul_(1.0 / math.sqrt(e // h)).add_(bias)
    weights = cheap_dropout(torch.softmax(scores, -1), mha.dropout, True)
    out = torch.matmul(weights, v).transpose(1, 2).reshape(n, lq, e)
    return F.linear(out, mha.out_proj.weight, mha.out_proj.bias)


def _feed_forward(layer: nn.Module, x: Tensor) -> Tensor:
    """linear2(dropout(activation(linear1(x)))) of an ``nn.Transformer*Layer``, dropout by :func:`cheap_dropout`."""
    return layer.linear2(cheap_dropout(layer.activation(layer.linear1(x)), layer.dropout.p))


def _strip(ids: list[int]) -> list[int]:
    """Ids before the first ``</s>`` with padding removed."""
    out: list[int] = []
    for i in ids:
        if i == EOS_ID:
            break
        if i != PAD_ID:
            out.append(i)
    return out


def build_model(vocab_size: int, mcfg: dict[str, Any]) -> Seq2SeqTransformer:
    """Model from the config's ``model`` section (unknown keys such as ``name`` are ignored)."""
    kw = {k: mcfg[k] for k in MODEL_KEYS if k in mcfg}
    return Seq2SeqTransformer(vocab_size, vocab_size, **kw)


def count_parameters(model: nn.Module) -> int:
    """Distinct trainable parameters (a tied embedding counts once)."""
    return sum(p.numel() for p in {id(p): p for p in model.parameters() if p.requires_grad}.values())
