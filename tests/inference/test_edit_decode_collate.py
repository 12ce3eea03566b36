"""The edit beam's batch, built at once over several reactions, equals PyG's collation of
:func:`reaction_graph` of each (every field the model reads), and the network outputs on it are the same."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Batch

import gnn_chemalgebra.inference.edit_decode as ed
from gnn_chemalgebra.data.edit_dataset import GraphCache, reaction_graph

pytestmark = pytest.mark.unit

# reagents before/after, single-atom and bond-free molecules, ions, repeated molecules, one reactant atom only
REACTIONS: list[tuple[list[str], list[str]]] = [
    (["N#Cc1ccsc1N", "O=[N+]([O-])c1cc(F)c(F)cc1F"], ["C1CCOC1", "[H-]", "[Na+]"]),
    (["CC(=O)Cl", "OCC"], []),
    (["[Cl-]"], ["O"]),
    (["C", "C", "O=O"], ["[Pt]"]),
    (["c1ccccc1Br", "OB(O)c1ccncc1"], ["[Pd]", "O=C([O-])[O-]", "[K+]", "[K+]"]),
    (["C/C=C/C(=O)O", "C[C@H](N)C(=O)O"], ["CN(C)C=O"]),
]


def _assert_same(a: torch.Tensor, b: torch.Tensor, name: str) -> None:
    assert a.dtype == b.dtype, name
    assert a.shape == b.shape, name
    assert torch.equal(a, b), name


@pytest.mark.parametrize("lo,hi", [(0, len(REACTIONS)), (2, 3), (3, 5)])
def test_collated_batch_equals_pyg_collation(lo: int, hi: int) -> None:
    cache = GraphCache()
    reactions = REACTIONS[lo:hi]
    datas = [reaction_graph(r, g, cache) for r, g in reactions]
    ref = Batch.from_data_list(datas)
    items = []
    for r, g in reactions:
        graphs = [cache.get(s) for s in (*r, *g)]
        items.append(([int(x[0]["z"].numel()) for x in graphs[: len(r)]], graphs))
    batch, views = ed._collate_reactions(items)
    for name in ("z", "x", "edge_index", "edge_attr", "batch", "pair_index", "pair_cur", "pair_dist"):
        _assert_same(getattr(batch, name), getattr(ref, name), name)
    assert batch.num_graphs == ref.num_graphs
    assert batch.nodes == [int(d.num_nodes) for d in datas]
    for view, d in zip(views, datas, strict=True):
        assert view.n_react == int(d.n_react)
        _assert_same(view.pair_index, d.pair_index, "pair_index (one reaction)")
        _assert_same(view.pair_cur, d.pair_cur, "pair_cur (one reaction)")


@pytest.mark.integration
def test_model_outputs_on_the_collated_batch_are_pyg_s() -> None:
    model = ed.load_predictor(ed.BUNDLED_CHECKPOINT).model
    cache = GraphCache()
    ref = Batch.from_data_list([reaction_graph(r, g, cache) for r, g in REACTIONS])
    items = []
    for r, g in REACTIONS:
        graphs = [cache.get(s) for s in (*r, *g)]
        items.append(([int(x[0]["z"].numel()) for x in graphs[: len(r)]], graphs))
    batch, _ = ed._collate_reactions(items)
    with torch.no_grad():
        want, got = model(ref), model(batch)
    for k in want:
        _assert_same(got[k], want[k], k)


@pytest.mark.integration
def test_pair_input_is_the_concatenation() -> None:
    model = ed.load_predictor(ed.BUNDLED_CHECKPOINT).model
    gen = torch.Generator().manual_seed(0)
    g = torch.randn(30, model.cur_emb.embedding_dim, generator=gen)
    for n in (0, 1, 7, 400):
        i = torch.randint(0, 30, (n,), generator=gen)
        j = torch.randint(0, 30, (n,), generator=gen)
        cur = torch.randint(0, model.cur_emb.num_embeddings, (n,), generator=gen)
        dist = torch.randint(0, model.dist_emb.num_embeddings, (n,), generator=gen)
        with torch.no_grad():
            want = torch.cat([g[i] + g[j], g[i] * g[j], model.cur_emb(cur) + model.dist_emb(dist)], -1)
            _assert_same(model._pair_input(g, i, j, cur, dist), want, f"pair input ({n} pairs)")
