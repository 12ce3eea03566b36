"""Model-level guarantees of the sequence baseline: padding is inert, decoding is consistent."""

from __future__ import annotations

import pytest
import torch

from gnn_chemalgebra.data.tokenize import EOS_ID, PAD_ID
from gnn_chemalgebra.models.transformer import Seq2SeqTransformer, count_parameters
from gnn_chemalgebra.training.seq2seq import seq2seq_loss

pytestmark = pytest.mark.unit


def _model(**kw) -> Seq2SeqTransformer:
    torch.manual_seed(0)
    args = dict(d_model=16, nhead=2, enc_layers=1, dec_layers=1, d_ff=32, dropout=0.0, max_positions=64)
    args.update(kw)
    return Seq2SeqTransformer(12, 12, **args).eval()


def test_loss_ignores_padding_logits() -> None:
    torch.manual_seed(0)
    tgt = torch.tensor([[5, 6, EOS_ID, PAD_ID, PAD_ID], [7, 8, 9, 10, EOS_ID]])
    logits = torch.randn(2, 5, 12)
    base = seq2seq_loss(logits, tgt, 0.1)
    changed = logits.clone()
    changed[0, 3:] = torch.randn(2, 12) * 100
    assert torch.equal(seq2seq_loss(changed, tgt, 0.1), base)
    changed[0, 1, 3] += 1.0  # a real position does matter
    assert not torch.equal(seq2seq_loss(changed, tgt, 0.1), base)


def test_source_padding_does_not_change_output() -> None:
    m = _model()
    src = torch.tensor([[4, 5, 6]])
    padded = torch.tensor([[4, 5, 6, PAD_ID, PAD_ID]])
    tgt_in = torch.tensor([[1, 7, 8]])
    torch.testing.assert_close(m(src, tgt_in), m(padded, tgt_in), atol=1e-5, rtol=1e-5)


def test_causal_mask_future_tokens_do_not_leak() -> None:
    m = _model()
    src = torch.tensor([[4, 5, 6]])
    a = m(src, torch.tensor([[1, 7, 8, 9]]))
    b = m(src, torch.tensor([[1, 7, 10, 11]]))
    torch.testing.assert_close(a[:, :2], b[:, :2])


@pytest.mark.parametrize("positional,share", [("sinusoidal", True), ("learned", False)])
def test_beam_one_equals_greedy(positional: str, share: bool) -> None:
    m = _model(positional=positional, share_embeddings=share)
    src = torch.tensor([[4, 5, 6, 7], [8, 9, PAD_ID, PAD_ID], [10, 11, 4, PAD_ID]])
    greedy = m.greedy(src, max_len=12)
    beam = m.beam_search(src, beam=1, max_len=12)
    assert [h[0][0] for h in beam] == greedy


def test_beam_returns_k_sorted_distinct_hypotheses() -> None:
    m = _model()
    src = torch.tensor([[4, 5, 6, 7], [8, 9, PAD_ID, PAD_ID]])
    out = m.beam_search(src, beam=4, max_len=6)
    for hyps in out:
        assert len(hyps) == 4
        scores = [s for _, s in hyps]
        assert scores == sorted(scores, reverse=True)
        assert len({tuple(ids) for ids, _ in hyps}) == 4
        assert all(EOS_ID not in ids and PAD_ID not in ids for ids, _ in hyps)
    # the best beam is at least as likely as greedy's path
    greedy = m.greedy(src, max_len=6)
    assert out[0][0][1] >= _score(m, src[:1], greedy[0]) - 1e-4


@torch.no_grad()
def _score(m: Seq2SeqTransformer, src: torch.Tensor, ids: list[int]) -> float:
    """Log-probability of ``ids`` (plus </s> unless cut by max_len) under teacher forcing."""
    full = ids + ([EOS_ID] if len(ids) < 6 else [])
    tgt_in = torch.tensor([[1] + full[:-1]])
    logp = torch.log_softmax(m(src, tgt_in), -1)[0]
    return float(sum(logp[i, t] for i, t in enumerate(full)))


def test_shared_embeddings_tie_generator() -> None:
    shared, separate = _model(share_embeddings=True), _model(share_embeddings=False)
    assert shared.generator.weight is shared.src_emb.weight
    assert count_parameters(separate) > count_parameters(shared)


@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
def test_cached_decoding_matches_full_recompute(positional: str) -> None:
    m = _model(positional=positional)
    src = torch.tensor([[4, 5, 6, 7], [8, 9, PAD_ID, PAD_ID]])
    mem, pad = m.encode(src)
    ys = torch.tensor([[1, 7, 8, 9], [1, 10, 4, 5]])
    full = m.decode(ys, mem, pad)
    cache = None
    for t in range(ys.shape[1]):
        step, cache = m.decode_step(ys[:, t], cache, mem, pad)
        torch.testing.assert_close(step, full[:, t], atol=1e-5, rtol=1e-5)
    assert m.greedy(src, 10) == m.greedy(src, 10, use_cache=False)
    fast, slow = m.beam_search(src, 3, 8), m.beam_search(src, 3, 8, use_cache=False)
    assert [[ids for ids, _ in h] for h in fast] == [[ids for ids, _ in h] for h in slow]


@pytest.mark.parametrize("positional,share", [("sinusoidal", True), ("learned", False)])
def test_fast_train_path_is_the_same_function(positional: str, share: bool) -> None:
    """train.fast_train: with dropout off, logits and gradients equal the nn.Transformer path (float64)."""
    m = _model(positional=positional, share_embeddings=share, enc_layers=2, dec_layers=2).double().train()
    src = torch.tensor([[4, 5, 6, 7, 8], [8, 9, PAD_ID, PAD_ID, PAD_ID], [10, 11, 4, 5, PAD_ID]])
    tgt_in = torch.tensor([[1, 7, 8, 9], [1, 10, PAD_ID, PAD_ID], [1, 4, 5, PAD_ID]])
    tgt_out = torch.tensor([[7, 8, 9, EOS_ID], [10, EOS_ID, PAD_ID, PAD_ID], [4, 5, EOS_ID, PAD_ID]])
    out = {}
    for fast in (False, True):
        m.fast_train = fast
        m.zero_grad()
        logits = m(src, tgt_in)
        seq2seq_loss(logits, tgt_out, 0.1).backward()
        out[fast] = (logits.detach(), {n: p.grad.clone() for n, p in m.named_parameters() if p.grad is not None})
    torch.testing.assert_close(out[True][0], out[False][0], atol=1e-12, rtol=1e-10)
    assert out[True][1].keys() == out[False][1].keys()
    for name, g in out[False][1].items():
        torch.testing.assert_close(out[True][1][name], g, atol=1e-12, rtol=1e-9, msg=name)


def test_fast_train_path_drops_like_dropout_and_eval_is_unchanged() -> None:
    """With dropout on, the fast path is random in training (its own masks) and the very same model in eval."""
    m = _model(dropout=0.3)
    src = torch.tensor([[4, 5, 6, 7], [8, 9, PAD_ID, PAD_ID]])
    tgt_in = torch.tensor([[1, 7, 8], [1, 10, 4]])
    m.eval()
    ref = m(src, tgt_in)
    m.fast_train = True
    assert torch.equal(m(src, tgt_in), ref)  # eval mode never takes the fast path
    m.train()
    torch.manual_seed(1)
    a = m(src, tgt_in)
    torch.manual_seed(2)
    b = m(src, tgt_in)
    assert not torch.allclose(a, b)
    m.zero_grad()
    a.sum().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in m.parameters() if p.requires_grad)


def _copy_model(share: bool) -> tuple[Seq2SeqTransformer, torch.Tensor]:
    """A tiny model trained for a moment to copy sources of 1-6 tokens, and 12 such sources (padded)."""
    m = _model(share_embeddings=share, enc_layers=2, dec_layers=2, d_model=32, d_ff=64).train()
    g = torch.Generator().manual_seed(3)
    opt = torch.optim.Adam(m.parameters(), lr=3e-3)

    def sources(n: int) -> torch.Tensor:
        src = torch.randint(4, 12, (n, 6), generator=g)
        lengths = torch.randint(1, 7, (n,), generator=g)
        return src.masked_fill(torch.arange(6)[None] >= lengths[:, None], PAD_ID)

    for _ in range(60):
        src = sources(32)
        tgt_out = torch.cat([src, torch.full((32, 1), PAD_ID)], 1)
        tgt_out[torch.arange(32), src.ne(PAD_ID).sum(1)] = EOS_ID
        tgt_in = torch.cat([torch.full((32, 1), 1), tgt_out[:, :-1]], 1).masked_fill(tgt_out.eq(PAD_ID), PAD_ID)
        opt.zero_grad()
        seq2seq_loss(m(src, tgt_in), tgt_out).backward()
        opt.step()
    return m.eval(), sources(12)


@pytest.mark.parametrize("share", [True, False])
def test_cached_decoding_drops_finished_rows_and_matches_full_recompute(share: bool) -> None:
    """Rows end at different steps (a finished row leaves the cached batch): the same tokens, row for row,
    as recomputing every prefix in full; beam search too."""
    m, src = _copy_model(share)
    cached, full = m.greedy(src, 15), m.greedy(src, 15, use_cache=False)
    assert cached == full
    assert len({len(ids) for ids in cached}) >= 3  # rows really ended at different steps
    fast, slow = m.beam_search(src, 4, 12), m.beam_search(src, 4, 12, use_cache=False)
    assert [[ids for ids, _ in h] for h in fast] == [[ids for ids, _ in h] for h in slow]
    for hf, hs in zip(fast, slow, strict=True):
        torch.testing.assert_close([s for _, s in hf], [s for _, s in hs], atol=1e-4, rtol=1e-5)
