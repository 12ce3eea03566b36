"""models.dense.to_dense_batch equals torch_geometric.utils.to_dense_batch (the network's padded views)."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.utils import to_dense_batch as pyg_to_dense_batch

from gnn_chemalgebra.models.dense import to_dense_batch

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("seed", range(6))
def test_equals_pyg(seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    n_groups = int(torch.randint(1, 9, (1,), generator=g))
    sizes = torch.randint(0, 7, (n_groups,), generator=g)  # empty groups included
    if int(sizes.sum()) == 0:
        sizes[0] = 1
    group = torch.repeat_interleave(torch.arange(n_groups), sizes)
    for shape, dtype in [((), torch.float), ((5,), torch.float), ((3, 2), torch.double), ((4,), torch.long)]:
        x = (torch.randn((len(group), *shape), generator=g) * 10).to(dtype)
        dense, mask = to_dense_batch(x, group, n_groups)
        want, want_mask = pyg_to_dense_batch(x, group, batch_size=n_groups)
        assert dense.dtype == want.dtype and dense.shape == want.shape and torch.equal(dense, want)
        assert torch.equal(mask, want_mask) and dense.is_contiguous()


def test_trailing_empty_groups_are_padding() -> None:
    x = torch.arange(6.0).view(3, 2)
    dense, mask = to_dense_batch(x, torch.tensor([0, 0, 1]), 4)
    assert dense.shape == (4, 2, 2) and mask.tolist() == [[True, True], [True, False], [False, False], [False, False]]
    assert torch.equal(dense[0], x[:2]) and torch.equal(dense[1, 0], x[2]) and not dense[2:].any()
