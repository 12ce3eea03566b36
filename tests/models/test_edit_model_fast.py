"""The edit model's training-mode shortcuts: the factored pair head and the subsampled pair loss."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch_geometric.data import Batch

from gnn_chemalgebra.chem.edits import NONE
from gnn_chemalgebra.data.edit_dataset import N_BOND_CLASSES, N_H_CLASSES, N_Q_CLASSES, record_example
from gnn_chemalgebra.models.edit_model import build_edit_model, edit_hparams, edit_losses, sample_pairs

pytestmark = pytest.mark.unit

RECORDS = [json.loads(line) for line in (Path(__file__).parents[1] / "edit_records.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def batch() -> Batch:
    return Batch.from_data_list([record_example(r) for r in RECORDS])


def _model(batch: Batch, dropout: float = 0.0):
    torch.manual_seed(0)
    mcfg = {"hidden": 32, "layers": 2, "attn_layers": 1, "heads": 2, "dropout": dropout}
    return build_edit_model(edit_hparams(mcfg, batch.x.size(1), batch.edge_attr.size(1)))


def test_eval_mode_pair_head_is_the_concatenated_form(batch: Batch) -> None:
    """Eval mode (inference, validation) computes exactly what the bundled checkpoints were scored with."""
    model = _model(batch).eval()
    with torch.no_grad():
        out = model(batch)
        h = model.convs(model.z_emb(batch.z) + model.x_in(batch.x), batch.edge_index, batch.edge_attr)
        g = model.mix(h, batch.batch, int(batch.num_graphs))
        i, j = batch.pair_index
        emb = model.cur_emb(batch.pair_cur) + model.dist_emb(batch.pair_dist)
        want = model.pair_head(torch.cat([g[i] + g[j], g[i] * g[j], emb], -1))
    assert torch.equal(out["pair"], want)


def test_factored_pair_head_equals_the_concatenated_one(batch: Batch) -> None:
    model = _model(batch)  # dropout 0: train and eval mode compute the same function
    with torch.no_grad():
        ref = model.eval()(batch)
        fast = model.train()(batch)
    assert fast["pair"].shape == (batch.pair_index.size(1), N_BOND_CLASSES)
    assert torch.allclose(fast["pair"], ref["pair"], atol=1e-5, rtol=1e-4)
    for key in ("h", "q", "prod"):  # the Transformer's eval fast path rounds differently too
        assert torch.allclose(fast[key], ref[key], atol=1e-5, rtol=1e-4)
    sel = torch.tensor([0, 3, 5, batch.pair_index.size(1) - 1])
    with torch.no_grad():
        part = model(batch, pair_sel=sel)
    assert torch.allclose(part["pair"], fast["pair"][sel], atol=1e-6)


def test_factored_pair_head_gradients_match(batch: Batch) -> None:
    model = _model(batch)
    grads = []
    for train in (False, True):
        model.zero_grad()
        model.train(train)
        edit_losses(model(batch), batch)["total"].backward()
        grads.append({n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None})
    assert grads[0].keys() == grads[1].keys()
    for name, g in grads[0].items():
        assert torch.allclose(g, grads[1][name], atol=1e-5, rtol=1e-3), name


def test_sample_pairs_keeps_bonds_and_changes(batch: Batch) -> None:
    torch.manual_seed(1)
    sel, w = sample_pairs(batch, 0.25)
    easy = (batch.pair_cur == NONE) & (batch.pair_y == NONE)
    must = (~easy).nonzero().squeeze(1)
    assert set(must.tolist()) <= set(sel.tolist())
    assert bool((sel[1:] > sel[:-1]).all())  # ascending, no repeats
    assert torch.equal(w, torch.where(easy[sel], 4.0, 1.0))
    assert 0 < int(easy[sel].sum()) < int(easy.sum())  # some of the easy pairs, not all
    full, ones = sample_pairs(batch, 1.0)
    assert torch.equal(full, torch.arange(batch.pair_cur.numel())) and bool((ones == 1).all())


def test_subsampled_pair_loss_is_unbiased(batch: Batch) -> None:
    torch.manual_seed(2)
    out = {
        "pair": torch.randn(batch.pair_cur.numel(), N_BOND_CLASSES),
        "h": torch.randn(batch.num_nodes, N_H_CLASSES),
        "q": torch.randn(batch.num_nodes, N_Q_CLASSES),
        "prod": torch.randn(batch.num_nodes),
    }
    full = edit_losses(out, batch)
    n = torch.arange(batch.pair_cur.numel())
    same = edit_losses(out, batch, pair_sel=n, pair_weight=torch.ones(n.numel()))
    assert torch.equal(same["pair"], full["pair"]) and torch.equal(same["total"], full["total"])
    draws = []
    for _ in range(3000):
        sel, w = sample_pairs(batch, 0.25)
        part = edit_losses({**out, "pair": out["pair"][sel]}, batch, pair_sel=sel, pair_weight=w)
        assert torch.equal(part["h"], full["h"])
        draws.append(float(part["pair"]))
    mean = sum(draws) / len(draws)
    assert abs(mean - float(full["pair"])) < 0.01 * float(full["pair"])
    assert min(draws) < float(full["pair"]) < max(draws)


@pytest.mark.integration
@pytest.mark.parametrize("opts", [{"size_buckets": True}, {"fast_train": True}])
def test_trainer_with_subsampled_pairs_is_seeded(tmp_path: Path, opts: dict) -> None:
    """Sampled pairs, bucketed batches and the fast path's dropout masks come from the seeded generators: two
    runs give the same weights. ``fast_train`` also switches the optimiser to the fused AdamW."""
    from gnn_chemalgebra.training.edits import EditTask
    from gnn_chemalgebra.training.run import train

    exs = [record_example(r) for r in RECORDS]
    weights = []
    for run in ("a", "b"):
        cfg = {
            "run_dir": str(tmp_path / run),
            "model": {"hidden": 16, "layers": 1, "attn_layers": 1, "heads": 2, "dropout": 0.1},
            "train": {"epochs": 2, "batch_size": 2, "seed": 3, "device": "cpu", "pair_keep": 0.5, **opts},
        }
        summary = train(cfg, task=EditTask({"train": exs, "valid": exs[:2]}))
        assert summary["steps"] == 2 * -(-len(exs) // 2)
        assert all(torch.isfinite(torch.tensor(h["train"]["total"])) for h in summary["history"])
        ck = torch.load(tmp_path / run / "last.pt", weights_only=True)
        assert all(bool(g["fused"]) == bool(opts.get("fast_train")) for g in ck["optimizer"]["param_groups"])
        weights.append(ck["model"])
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


@pytest.mark.integration
def test_trainer_without_size_buckets_uses_plain_shuffled_batches(tmp_path: Path) -> None:
    from torch_geometric.loader import DataLoader

    from gnn_chemalgebra.config import typed
    from gnn_chemalgebra.training import distributed
    from gnn_chemalgebra.training.edits import EditTask

    exs = [record_example(r) for r in RECORDS]
    orders = {}
    for buckets in (False, True):
        cfg = {"run_dir": str(tmp_path), "train": {"batch_size": 2, "size_buckets": buckets}}
        task, gen = EditTask({"train": exs, "valid": exs}), torch.Generator()
        gen.manual_seed(0)
        task.build(typed(cfg, model_name="edits"), torch.device("cpu"), None, gen, distributed.DistInfo())
        orders[buckets] = [b.num_nodes for b in task.train_batches(0)]
    gen = torch.Generator()
    gen.manual_seed(0)
    assert orders[False] == [b.num_nodes for b in DataLoader(exs, batch_size=2, shuffle=True, generator=gen)]
    assert sorted(orders[True]) != sorted(orders[False])  # other pairings: similar sizes together


def _double_batch(batch: Batch) -> Batch:
    out = batch.clone()
    out.x, out.edge_attr = batch.x.double(), batch.edge_attr.double()
    return out


def test_size_blocks_cover_every_row_once(batch: Batch) -> None:
    from gnn_chemalgebra.models.edit_model import BLOCK_SIZE_RATIO, _size_blocks

    n = int(batch.num_graphs)
    order, back, blocks = _size_blocks(batch.batch, n, torch.float32)
    assert torch.equal(order.sort().values, torch.arange(batch.num_nodes))
    assert torch.equal(order[back], torch.arange(batch.num_nodes))
    sizes = torch.bincount(batch.batch, minlength=n)
    assert torch.all(sizes[batch.batch[order]][:-1] >= sizes[batch.batch[order]][1:])  # largest reactions first
    row = 0
    for first, n_rows, n_react, longest, slot, bias in blocks:
        assert first == row
        groups = batch.batch[order[first : first + n_rows]]
        assert groups.unique().numel() == n_react and int(sizes[groups].max()) == longest
        assert int(sizes[groups].min()) >= BLOCK_SIZE_RATIO * longest
        assert (slot is None) == (n_rows == n_react * longest)
        if bias is not None:
            assert int(torch.isfinite(bias).sum()) == n_rows
        row += n_rows
    assert row == batch.num_nodes and len(blocks) > 1
    assert any(b[4] is None for b in blocks) and any(b[4] is not None for b in blocks)


def test_fast_train_path_equals_the_padded_path(batch: Batch) -> None:
    """Packed rows with attention in size blocks: the same outputs and gradients as the padded encoder."""
    torch.manual_seed(0)
    mcfg = {"hidden": 32, "layers": 2, "attn_layers": 2, "heads": 4, "dropout": 0.0}
    model = build_edit_model(edit_hparams(mcfg, batch.x.size(1), batch.edge_attr.size(1)), fast_train=True).double()
    data = _double_batch(batch)
    outs, grads = [], []
    for train in (False, True):  # dropout 0: eval mode is the padded reference
        model.zero_grad()
        model.train(train)
        out = model(data)
        edit_losses(out, data)["total"].backward()
        outs.append(out)
        grads.append({n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None})
    for key in ("pair", "h", "q", "prod"):
        assert torch.allclose(outs[0][key], outs[1][key], atol=1e-10), key
    assert grads[0].keys() == grads[1].keys()
    for name, g in grads[0].items():
        assert torch.allclose(g, grads[1][name], atol=1e-9, rtol=1e-7), name


def test_fast_train_changes_no_parameter_and_no_eval_output(batch: Batch) -> None:
    plain = _model(batch, dropout=0.1)
    mcfg = {"hidden": 32, "layers": 2, "attn_layers": 1, "heads": 2, "dropout": 0.1}
    fast = build_edit_model(edit_hparams(mcfg, batch.x.size(1), batch.edge_attr.size(1)), fast_train=True)
    assert plain.state_dict().keys() == fast.state_dict().keys()
    fast.load_state_dict(plain.state_dict())
    with torch.no_grad():
        a, b = plain.eval()(batch), fast.eval()(batch)
    assert all(torch.equal(a[k], b[k]) for k in a)
    fast.train()
    torch.manual_seed(5)
    with torch.no_grad():  # training mode draws dropout masks: outputs differ from eval but stay finite
        out = fast(batch)
    assert all(torch.isfinite(v).all() for v in out.values()) and not torch.equal(out["h"], b["h"])
