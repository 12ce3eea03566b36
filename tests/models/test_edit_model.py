"""Bond-edit dataset, model and decoder on a handful of real USPTO-BAL base reactions (no training)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch.nn import functional as F
from torch_geometric.data import Batch

from gnn_chemalgebra.chem.edits import NONE, gold_products, labels_for_record
from gnn_chemalgebra.data.edit_dataset import (
    H_ZERO,
    IGNORE,
    N_BOND_CLASSES,
    N_H_CLASSES,
    N_Q_CLASSES,
    GraphCache,
    h_delta_from_residual,
    h_residual_class,
    reaction_graph,
    record_example,
)
from gnn_chemalgebra.inference.edit_beam import decode_reaction
from gnn_chemalgebra.models.edit_model import build_edit_model, edit_hparams, edit_losses, exact_edit_hits

pytestmark = pytest.mark.unit

RECORDS = [json.loads(line) for line in (Path(__file__).parents[1] / "edit_records.jsonl").read_text().splitlines()]


def _gold_out(d) -> dict[str, torch.Tensor]:
    """Model-shaped outputs that put all mass on the gold labels."""
    return {
        "pair": F.one_hot(d.pair_y, N_BOND_CLASSES).float() * 20,
        "h": F.one_hot(d.h_y.clamp(min=0), N_H_CLASSES).float() * 20,
        "q": F.one_hot(d.q_y.clamp(min=0), N_Q_CLASSES).float() * 20,
        "prod": (d.prod_y.float() * 2 - 1) * 20,
    }


@pytest.mark.parametrize("record", RECORDS, ids=[str(r["id"]) for r in RECORDS])
def test_labels_to_example_shapes(record: dict) -> None:
    labels = labels_for_record(record)
    d = record_example(record)
    n_react = sum(labels.n_atoms)
    assert int(d.n_react) == n_react
    assert d.pair_index.shape == (2, n_react * (n_react - 1) // 2)
    assert bool((d.pair_index[0] < d.pair_index[1]).all()) and int(d.pair_index.max()) < n_react
    assert d.x.size(0) == d.num_nodes == d.z.numel() == d.atom2mol.numel()
    # pair labels differ from the reactant bonds exactly on the gold changes
    changed = {(int(i), int(j)): int(c) for i, j, c in zip(*d.pair_index, d.pair_y, strict=True) if c != 0}
    gold = {(i, j): c for i, j, c in labels.bonds}
    diff = (d.pair_y != d.pair_cur).nonzero().flatten().tolist()
    assert {(int(d.pair_index[0, k]), int(d.pair_index[1, k])) for k in diff} == set(gold)
    assert all(changed.get(p, NONE) == c for p, c in gold.items())
    # atom labels: reactant atoms labelled, reagent atoms ignored
    assert bool((d.h_y[:n_react] >= 0).all()) and bool((d.h_y[n_react:] == IGNORE).all())
    assert d.prod_y[:n_react].nonzero().flatten().tolist() == labels.product_atoms
    assert bool(d.is_reagent[n_react:].all()) and not bool(d.is_reagent[:n_react].any())


@pytest.mark.parametrize("record", RECORDS, ids=[str(r["id"]) for r in RECORDS])
def test_gold_outputs_decode_to_gold_products(record: dict) -> None:
    cache = GraphCache()
    d = record_example(record, cache)
    n_atoms = [int(cache.get(s)[0]["z"].numel()) for s in record["reactants"]]
    cands = decode_reaction(record["reactants"], n_atoms, _gold_out(d), d, beam=3)
    assert cands and cands[0].products == sorted(gold_products(record))
    assert [c.score for c in cands] == sorted((c.score for c in cands), reverse=True)


def test_residual_round_trip() -> None:
    for dh in range(-3, 4):
        for dv in (-2.0, -1.5, -1.0, 0.0, 0.5, 1.0, 1.5, 3.0):
            c = h_residual_class(dh, dv)
            if abs(2 * (dh + dv)) <= 6:
                assert h_delta_from_residual(c, dv) == dh
    assert h_residual_class(-1, 1.0) == H_ZERO  # forming a bond costs one hydrogen: no residual
    assert h_delta_from_residual(H_ZERO, 0.5) is None  # half an aromatic edit cannot be balanced


def test_subsampled_pairs_keep_bonds_and_changes() -> None:
    record = RECORDS[1]
    labels = labels_for_record(record)
    d = record_example(record, max_pairs=60)
    pairs = set(zip(d.pair_index[0].tolist(), d.pair_index[1].tolist(), strict=True))
    assert len(pairs) == 60
    assert {(i, j) for i, j, _ in labels.bonds} <= pairs
    n_bonds = int(d.edge_index[:, d.edge_index[0] < int(d.n_react)].size(1)) // 2
    assert int((d.pair_cur != NONE).sum()) == n_bonds


def test_model_batch_losses_and_equivariance() -> None:
    torch.manual_seed(0)
    exs = [record_example(r) for r in RECORDS[:3]]
    batch = Batch.from_data_list(exs)
    assert batch.pair_index.max() < batch.num_nodes
    mcfg = {"hidden": 16, "layers": 1, "attn_layers": 1, "heads": 2, "dropout": 0.0}
    hp = edit_hparams(mcfg, exs[0].x.size(1), exs[0].edge_attr.size(1))
    model = build_edit_model(hp).eval()
    out = model(batch)
    assert out["pair"].shape == (batch.pair_index.size(1), N_BOND_CLASSES)
    assert out["h"].shape == (batch.num_nodes, N_H_CLASSES)
    losses = edit_losses(out, batch)
    assert all(torch.isfinite(v) for v in losses.values())
    assert exact_edit_hits(out, batch).shape == (3,)
    # the reactant order is only a numbering: reversing it permutes the pair logits
    rec = RECORDS[1]
    a = reaction_graph(rec["reactants"], rec["reagents"])
    b = reaction_graph(rec["reactants"][::-1], rec["reagents"])
    assert len(rec["reactants"]) == 2
    sizes = [int(GraphCache().get(s)[0]["z"].numel()) for s in rec["reactants"]]
    perm = list(range(sizes[0], sum(sizes))) + list(range(sizes[0]))  # new index of old atom g
    new_of = {g: k for k, g in enumerate(perm)}
    oa, ob = model(a), model(b)
    pos_b = {(int(i), int(j)): k for k, (i, j) in enumerate(zip(*b.pair_index, strict=True))}
    for k, (i, j) in enumerate(zip(a.pair_index[0].tolist(), a.pair_index[1].tolist(), strict=True)):
        ni, nj = sorted((new_of[i], new_of[j]))
        assert torch.allclose(oa["pair"][k], ob["pair"][pos_b[(ni, nj)]], atol=1e-4)
