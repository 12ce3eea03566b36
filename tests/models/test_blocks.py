"""blocks.GINE and blocks.scatter stand in for PyG's GINEConv and scatter: same parameters, same initial values
(same RNG use), bit-identical outputs and gradients -- so checkpoints load and predictions do not move."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.nn import GINEConv
from torch_geometric.utils import scatter as pyg_scatter

from gnn_chemalgebra.models.blocks import GINE, mlp, scatter

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gine_matches_pyg_gineconv_bit_for_bit(seed: int) -> None:
    H, E = 32, 6
    torch.manual_seed(seed)
    old = GINEConv(mlp(H, H, H), edge_dim=E, train_eps=True)
    rng_old = torch.get_rng_state()
    torch.manual_seed(seed)
    new = GINE(mlp(H, H, H), E)
    assert torch.equal(rng_old, torch.get_rng_state())  # the same draws, so seeded training starts the same
    so, sn = old.state_dict(), new.state_dict()
    assert list(so) == list(sn)
    assert all(torch.equal(so[k], sn[k]) for k in so)
    with torch.no_grad():
        old.eps.fill_(0.25)
        new.eps.fill_(0.25)
    n, m = 50 + seed, 160
    x1 = torch.randn(n, H, requires_grad=True)
    x2 = x1.detach().clone().requires_grad_()
    ei, ea = torch.randint(0, n, (2, m)), torch.randn(m, E)
    y1, y2 = old(x1, ei, ea), new(x2, ei, ea)
    assert torch.equal(y1, y2)
    y1.square().sum().backward()
    y2.square().sum().backward()
    assert torch.equal(x1.grad, x2.grad)
    for (a, p1), (b, p2) in zip(old.named_parameters(), new.named_parameters(), strict=True):
        assert a == b and torch.equal(p1.grad, p2.grad)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max"])
def test_scatter_matches_pyg(reduce: str) -> None:
    torch.manual_seed(0)
    src = torch.randn(300, 16, requires_grad=True)
    idx = torch.randint(0, 20, (300,))
    a = pyg_scatter(src, idx, dim=0, dim_size=25, reduce=reduce)  # rows 20..24 get nothing
    b = scatter(src, idx, dim=0, dim_size=25, reduce=reduce)
    assert torch.equal(a, b)
    assert torch.equal(torch.autograd.grad(a.sum(), src)[0], torch.autograd.grad(b.sum(), src)[0])
    v = torch.randint(0, 5, (40,))
    i = torch.randint(0, 7, (40,))
    assert torch.equal(pyg_scatter(v, i, 0, None, reduce), scatter(v, i, 0, None, reduce))
