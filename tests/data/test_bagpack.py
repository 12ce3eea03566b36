"""PackedBags.batch gives, key for key, the tensors PyG's Batch.from_data_list gives for the same bags."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Batch

from gnn_chemalgebra.data.bagbatch import BagFields
from gnn_chemalgebra.data.bagpack import PackedBags
from gnn_chemalgebra.data.dataset import to_data

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def data(toy_bags):
    exs, feat, vocab = toy_bags
    return [to_data(ex, feat, vocab, i) for i, ex in enumerate(exs)]


def _same(got, want) -> None:
    keys = set(want.keys()) - {"num_nodes"}
    assert set(got.keys()) == keys
    for k in keys:
        a, b = getattr(got, k), getattr(want, k)
        assert a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b), k
    assert got.num_graphs == want.num_graphs and got.num_nodes == want.num_nodes


def test_batches_equal_pyg_collation(data) -> None:
    packed = PackedBags(data)
    assert len(packed) == len(data) >= 100
    gen = torch.Generator().manual_seed(3)
    orders = [[0], [5, 2], list(range(len(data))), torch.randperm(len(data), generator=gen)[:64].tolist(),
              [7, 7, 3]]  # fmt: skip
    for order in orders:
        _same(packed.batch(order), Batch.from_data_list([data[i] for i in order]))
    _same(packed.batch(torch.tensor([9, 1, 4])), Batch.from_data_list([data[9], data[1], data[4]]))


def test_plain_fields_and_errors(data) -> None:
    plain = [BagFields({k: d[k] for k in d.keys()}) for d in data[:30]]
    _same(PackedBags(plain).batch([3, 0, 29]), Batch.from_data_list([data[3], data[0], data[29]]))
    with pytest.raises(ValueError):
        PackedBags([])
    with pytest.raises(ValueError):
        PackedBags(plain).batch([])
    with pytest.raises(TypeError):
        PackedBags([BagFields({"num_nodes": 1, "num_mols": 1, "name": "x"})])
