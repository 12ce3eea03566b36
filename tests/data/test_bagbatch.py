"""The one way bags are batched (PackedBags, collate_bags): each field shifted by what comes before it, so the
network's indices stay inside their bag, and every bag reads back out of its batch unchanged, in any order."""

from __future__ import annotations

import pytest
import torch

from gnn_chemalgebra.data.bagbatch import PackedBags, collate_bags
from gnn_chemalgebra.data.bagdata import BagData
from gnn_chemalgebra.data.dataset import to_data

pytestmark = pytest.mark.unit

# fields by what one row stands for (the rest are one row per bag)
NODE = ("z", "x", "atom2mol")
EDGE = ("edge_attr",)
MOL = ("mol_graph", "mol_feat", "mol_raw", "mol_coef", "mol_comp", "y_role", "y_coef")
EXT = ("ext_feat", "ext_y", "ext_graph")


def _bag(atom2mol: list[int], edges: list[tuple[int, int]], n_ext: int, idx: int) -> BagData:
    n, m = len(atom2mol), max(atom2mol) + 1
    return BagData(
        z=torch.arange(n) + 10 * idx,
        edge_index=torch.tensor(edges, dtype=torch.long).reshape(-1, 2).t(),
        atom2mol=torch.tensor(atom2mol),
        mol_graph=torch.zeros(m, dtype=torch.long),
        ext_feat=torch.full((n_ext, 2), float(idx)),
        ext_graph=torch.zeros(n_ext, dtype=torch.long),
        idx=torch.tensor([idx]),
        y_extra=torch.full((1, 3), float(idx)),
        num_mols=m,
        num_nodes=n,
    )


def test_hand_built_bags_are_shifted_by_what_comes_before() -> None:
    bags = [_bag([0, 0, 1], [(0, 1), (1, 0)], 2, 0), _bag([0, 0], [(0, 1), (1, 0)], 0, 1), _bag([0], [], 1, 2)]
    b = collate_bags(bags)
    assert (b.num_graphs, b.num_nodes) == (3, 6)
    assert b.edge_index.tolist() == [[0, 1, 3, 4], [1, 0, 4, 3]]  # by the atoms before the bag
    assert b.atom2mol.tolist() == [0, 0, 1, 2, 2, 3]  # by the molecules before it
    assert b.mol_graph.tolist() == [0, 0, 1, 2] and b.ext_graph.tolist() == [0, 0, 2]  # by the bags
    assert b.batch.tolist() == [0, 0, 0, 1, 1, 2] and b.ptr.tolist() == [0, 3, 5, 6]
    assert b.num_mols.tolist() == [2, 1, 1] and b.idx.tolist() == [0, 1, 2]
    assert b.z.tolist() == [0, 1, 2, 10, 11, 20] and b.y_extra.shape == (3, 3) and b.ext_feat.shape == (3, 2)
    assert b.edge_index.dtype == b.atom2mol.dtype == b.batch.dtype == torch.long
    assert bags[1].edge_index.tolist() == [[0, 1], [1, 0]]  # the bags themselves are left as they were


def _unbatch(b, i: int) -> dict[str, torch.Tensor]:
    """Bag ``i`` of batch ``b``, its shifts taken off again."""
    nodes = b.batch == i
    mols = b.mol_graph == i
    first_mol = int(mols.nonzero()[0]) if bool(mols.any()) else 0
    out = {k: getattr(b, k)[nodes] for k in NODE}
    out["atom2mol"] = out["atom2mol"] - first_mol
    edges = b.batch[b.edge_index[0]] == i
    out["edge_index"] = b.edge_index[:, edges] - int(b.ptr[i])
    out.update({k: getattr(b, k)[edges] for k in EDGE})
    out.update({k: getattr(b, k)[mols] for k in MOL if hasattr(b, k)})
    out["mol_graph"] = out["mol_graph"] - i
    if hasattr(b, "ext_graph"):
        ext = b.ext_graph == i
        out.update({k: getattr(b, k)[ext] for k in EXT})
        out["ext_graph"] = out["ext_graph"] - i
    return out


def _reads_back(b, bags: list) -> None:
    assert b.num_graphs == len(bags) and b.num_nodes == sum(d.num_nodes for d in bags)
    assert set(b.keys()) == (set(bags[0].keys()) - {"num_nodes"}) | {"batch", "ptr"}
    # the network's indices stay inside their bag: bonds, atom -> molecule, molecule -> bag
    assert torch.equal(b.batch[b.edge_index[0]], b.batch[b.edge_index[1]])
    assert torch.equal(b.mol_graph[b.atom2mol], b.batch)
    for i, bag in enumerate(bags):
        for key, value in _unbatch(b, i).items():
            assert value.dtype == bag[key].dtype and torch.equal(value, bag[key]), (key, i)
        for key in set(bag.keys()) - set(NODE + EDGE + MOL + EXT) - {"edge_index", "num_nodes", "num_mols"}:
            assert torch.equal(getattr(b, key)[i], bag[key].reshape(getattr(b, key)[i].shape)), key
        assert int(b.num_mols[i]) == bag.num_mols


@pytest.mark.parametrize("labels", [True, False])
def test_every_bag_reads_back_out_of_its_batch(toy_bags, labels: bool) -> None:
    exs, feat, vocab = toy_bags
    data = [to_data(ex, feat, vocab, i, labels=labels) for i, ex in enumerate(exs)]
    assert len(data) >= 100
    for lo, hi in [(0, 1), (0, 64), (64, len(data)), (0, len(data))]:
        _reads_back(collate_bags(data[lo:hi]), data[lo:hi])


def test_packed_bags_batch_any_order_like_collate_bags(toy_bags) -> None:
    exs, feat, vocab = toy_bags
    data = [to_data(ex, feat, vocab, i) for i, ex in enumerate(exs)]
    packed = PackedBags(data)
    assert len(packed) == len(data)
    gen = torch.Generator().manual_seed(3)
    orders = [[0], [5, 2], torch.randperm(len(data), generator=gen)[:64].tolist(), [7, 7, 3]]
    for order in orders:
        b = packed.batch(torch.tensor(order))
        _reads_back(b, [data[i] for i in order])
        ref = collate_bags([data[i] for i in order])
        assert all(torch.equal(getattr(b, k), getattr(ref, k)) for k in ref.keys())
    with pytest.raises(ValueError):
        PackedBags([])
    with pytest.raises(ValueError):
        packed.batch([])
    with pytest.raises(TypeError):
        PackedBags([BagData(num_nodes=1, num_mols=1, name="x")])


def test_bag_fields_read_and_write_as_attributes_and_errors(toy_bags) -> None:
    exs, feat, vocab = toy_bags
    bag = to_data(exs[0], feat, vocab, 0, labels=False)
    bag.extra_field = torch.ones(1)
    assert bag["extra_field"] is bag.extra_field and bag.num_mols == len(exs[0].mols)
    with pytest.raises(AttributeError):
        _ = bag.no_such_field
    with pytest.raises(ValueError):
        collate_bags([])


def test_to_moves_tensors_and_keeps_counts(toy_bags) -> None:
    exs, feat, vocab = toy_bags
    b = collate_bags([to_data(ex, feat, vocab, i, labels=False) for i, ex in enumerate(exs[:5])])
    moved = b.to("cpu")
    assert moved.num_graphs == 5 and moved.num_nodes == b.num_nodes and torch.equal(moved.z, b.z)
    assert getattr(moved, "ext_feat", None) is None  # missing fields read as absent (the model's getattr)
