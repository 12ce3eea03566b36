"""The blocks' training-mode fast path (models/blocks.py): packed attention rows equal the padded encoder, the
cheap dropout keeps its rate and expectation, and eval mode -- every prediction -- is the same with or without it."""

from __future__ import annotations

import pytest
import torch

from gnn_chemalgebra.models.blocks import CheapDropout, ConvStack, DenseSetAttention, cheap_dropout, mlp
from gnn_chemalgebra.models.dense import to_dense_batch

pytestmark = pytest.mark.unit


def _groups(seed: int, n_groups: int = 20) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    group = torch.sort(torch.randint(0, n_groups, (240,), generator=g))[0]
    return group[group != 5]  # one empty group (all padding) as well


@pytest.mark.parametrize("layers", [1, 2])
def test_packed_forward_equals_the_padded_encoder(layers: int) -> None:
    torch.manual_seed(layers)
    m = DenseSetAttention(32, layers, 4, dropout=0.0, fast_train=True).double().train()
    group = _groups(layers)
    h1 = torch.randn(group.numel(), 32, dtype=torch.double, requires_grad=True)
    h2 = h1.detach().clone().requires_grad_()
    fast = m(h1, group, 21)
    dense, mask = to_dense_batch(h2, group, batch_size=21)
    slow = m.enc(dense, src_key_padding_mask=~mask)[mask]
    torch.testing.assert_close(fast, slow, rtol=1e-12, atol=1e-12)
    g_fast = torch.autograd.grad(fast.square().sum(), [h1, *m.parameters()])
    g_slow = torch.autograd.grad(slow.square().sum(), [h2, *m.parameters()])
    for a, b in zip(g_fast, g_slow, strict=True):
        assert torch.isfinite(a).all()
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)


def test_eval_mode_is_unchanged_by_the_fast_path() -> None:
    torch.manual_seed(0)
    slow_conv = ConvStack("gine", 32, 2, 3, 4, 0.1)
    slow_att = DenseSetAttention(32, 2, 4, 0.1)
    torch.manual_seed(0)
    fast_conv = ConvStack("gine", 32, 2, 3, 4, 0.1, fast_train=True)
    fast_att = DenseSetAttention(32, 2, 4, 0.1, fast_train=True)
    for slow, fast in ((slow_conv, fast_conv), (slow_att, fast_att)):  # same parameters from the same draws
        pairs = zip(slow.state_dict().values(), fast.state_dict().values(), strict=True)
        assert all(torch.equal(a, b) for a, b in pairs)
        slow.eval(), fast.eval()
    group = _groups(3)
    x = torch.randn(group.numel(), 32)
    ei = torch.randint(0, group.numel(), (2, 300))
    ea = torch.randn(300, 3)
    assert torch.equal(slow_conv(x, ei, ea), fast_conv(x, ei, ea))
    assert torch.equal(slow_att(x, group, 21), fast_att(x, group, 21))


def test_cheap_dropout_rate_scale_and_gradient() -> None:
    x = torch.ones(400_000, requires_grad=True)
    torch.manual_seed(1)
    y = cheap_dropout(x, 0.1)
    torch.manual_seed(1)
    assert torch.equal(y, cheap_dropout(x, 0.1))  # the global generator decides: seeded runs repeat
    cut = round(0.1 * 65536)
    kept = y != 0
    assert abs(1 - kept.double().mean().item() - cut / 65536) < 3e-3
    assert torch.all(y[kept] == 65536 / (65536 - cut))
    y.sum().backward()
    assert torch.equal(x.grad, y.detach())  # d(x * mask)/dx = mask
    assert cheap_dropout(x, 0.1, training=False) is x and cheap_dropout(x, 0.0) is x
    assert torch.equal(cheap_dropout(x, 1.0), torch.zeros_like(x))
    odd = torch.randn(3, 7)  # numel not a multiple of 4
    assert cheap_dropout(odd, 0.5).shape == odd.shape


def test_cheap_dropout_module_and_mlp() -> None:
    d = CheapDropout(0.3)
    x = torch.randn(64, 16)
    assert not torch.equal(d(x), x)
    d.eval()
    assert d(x) is x
    assert isinstance(mlp(4, 8, 2, 0.1, cheap=True)[2], CheapDropout)
    assert type(mlp(4, 8, 2, 0.1)[2]) is torch.nn.Dropout
    assert list(mlp(4, 8, 2, 0.1, cheap=True).state_dict()) == list(mlp(4, 8, 2, 0.1).state_dict())


def test_cheap_dropout_mask_equals_the_bool_comparison() -> None:
    """The in-place int16 comparison gives the very mask (and values) of ``(bits >= cut - 32768).to(dtype)``."""
    x = torch.randn(1001, 37, dtype=torch.float32)
    for p in (0.1, 0.37):
        torch.manual_seed(7)
        fast = cheap_dropout(x, p)
        torch.manual_seed(7)
        cut = round(p * 65536)
        bits = torch.empty((x.numel() + 3) // 4, dtype=torch.int64).random_(-(2**63), None)
        bits = bits.view(torch.int16)[: x.numel()].view(x.shape)
        ref = x * (bits >= cut - 32768).to(x.dtype).mul_(65536 / (65536 - cut))
        assert torch.equal(fast, ref)


def test_packed_forward_head_major_layout_with_odd_groups() -> None:
    """Heads laid out head-major (batch index head * groups + group): same output as the padded encoder with
    groups of one row, an empty first group and one much longer group (float64)."""
    torch.manual_seed(3)
    m = DenseSetAttention(24, 2, 3, dropout=0.0, fast_train=True).double().train()
    sizes = [0, 1, 9, 1, 2, 0, 5]
    group = torch.repeat_interleave(torch.arange(len(sizes)), torch.tensor(sizes))
    h = torch.randn(group.numel(), 24, dtype=torch.double)
    dense, mask = to_dense_batch(h, group, batch_size=len(sizes))
    slow = m.enc(dense, src_key_padding_mask=~mask)[mask]
    torch.testing.assert_close(m(h, group, len(sizes)), slow, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reduce", ["max", "min"])
def test_scatter_extreme_gradient_equals_scatter_reduce(reduce: str) -> None:
    """blocks.scatter's max/min with a gradient: the same values, and the same gradient as torch's own
    scatter_reduce_ autograd, ties (shared evenly), zero extremes and empty groups included."""
    from gnn_chemalgebra.models.blocks import scatter

    torch.manual_seed(0)
    index = torch.sort(torch.randint(0, 30, (200,)))[0]
    index = index[index != 4]  # group 4 empty
    src = torch.randn(index.numel(), 16).round()  # rounded: many ties, zeros among them
    src[:5] = 0.0
    a = src.clone().requires_grad_()
    b = src.clone().requires_grad_()
    fast = scatter(a, index, 0, 31, reduce)
    idx = index.view(-1, 1).expand_as(b)
    ref = b.new_zeros(31, 16).scatter_reduce(0, idx, b, reduce=f"a{reduce}", include_self=False)
    assert torch.equal(fast, ref)
    g = torch.randn(31, 16)
    fast.backward(g)
    ref.backward(g)
    assert torch.equal(a.grad, b.grad)
    with torch.no_grad():
        assert torch.equal(scatter(a, index, 0, 31, reduce), ref)
