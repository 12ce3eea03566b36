"""collate_bags (no PyG) gives every tensor PyG's Batch.from_data_list gives for the same bags."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Batch

from gnn_chemalgebra.data.bagbatch import BagFields, collate_bags
from gnn_chemalgebra.data.dataset import to_data

pytestmark = pytest.mark.unit


def _same(got, want) -> None:
    keys = set(want.keys()) - {"num_nodes"}  # an int in both: compared below
    assert set(got.keys()) == keys
    for k in keys:
        a, b = getattr(got, k), getattr(want, k)
        assert isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor), k
        assert a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b), k
    assert got.num_graphs == want.num_graphs and got.num_nodes == want.num_nodes


@pytest.mark.parametrize("labels", [True, False])
def test_same_tensors_as_pyg(toy_bags, labels: bool) -> None:
    exs, feat, vocab = toy_bags
    data = [to_data(ex, feat, vocab, i, labels=labels) for i, ex in enumerate(exs)]
    assert len(data) >= 100
    for lo, hi in [(0, 1), (0, 64), (64, len(data)), (0, len(data))]:
        _same(collate_bags(data[lo:hi]), Batch.from_data_list(data[lo:hi]))


def test_fields_without_pyg_data(toy_bags) -> None:
    exs, feat, vocab = toy_bags
    data = [to_data(ex, feat, vocab, i, labels=False) for i, ex in enumerate(exs[:50])]
    plain = [BagFields({k: d[k] for k in d.keys()}) for d in data]
    assert plain[3].num_mols == data[3].num_mols
    _same(collate_bags(plain), Batch.from_data_list(data))
    with pytest.raises(AttributeError):
        _ = plain[0].no_such_field
    with pytest.raises(ValueError):
        collate_bags([])


def test_to_moves_tensors_and_keeps_counts(toy_bags) -> None:
    exs, feat, vocab = toy_bags
    b = collate_bags([to_data(ex, feat, vocab, i, labels=False) for i, ex in enumerate(exs[:5])])
    moved = b.to("cpu")
    assert moved.num_graphs == 5 and moved.num_nodes == b.num_nodes and torch.equal(moved.z, b.z)
    assert getattr(moved, "ext_feat", None) is None  # missing fields read as absent (the model's getattr)
