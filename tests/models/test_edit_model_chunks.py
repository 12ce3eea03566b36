"""The edit model's pair head in chunks: the same logits, bit for bit, as one call over every pair, and a
bounded peak memory for a reaction whose pairs would not fit at once."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import torch

import gnn_chemalgebra.inference.edit_decode as ed
import gnn_chemalgebra.models.edit_model as em
from gnn_chemalgebra.models.edit_model import build_edit_model

REACTIONS: list[tuple[list[str], list[str]]] = [
    (["N#Cc1ccsc1N", "O=[N+]([O-])c1cc(F)c(F)cc1F"], ["C1CCOC1", "[H-]", "[Na+]"]),
    (["CC(=O)Cl", "OCC"], []),
    (["c1ccccc1Br", "OB(O)c1ccncc1"], ["[Pd]", "O=C([O-])[O-]", "[K+]", "[K+]"]),
    (["C/C=C/C(=O)O", "C[C@H](N)C(=O)O"], ["CN(C)C=O"]),
    (["CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCBr", "Oc1ccc(cc1)C(C)(C)c1ccc(O)cc1"], ["[K+]", "O=C([O-])[O-]"]),
]


def _random_pairs(model: torch.nn.Module, n: int, atoms: int = 300, seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    g = torch.randn(atoms, model.cur_emb.embedding_dim, generator=gen)
    i = torch.randint(0, atoms, (n,), generator=gen)
    j = torch.randint(0, atoms, (n,), generator=gen)
    cur = torch.randint(0, model.cur_emb.num_embeddings, (n,), generator=gen)
    dist = torch.randint(0, model.dist_emb.num_embeddings, (n,), generator=gen)
    return g, i, j, cur, dist


@pytest.mark.unit
@pytest.mark.parametrize("hidden", [32, 128])
def test_chunked_pair_logits_are_the_single_call_s(hidden: int) -> None:
    torch.manual_seed(0)
    hp = {"x_dim": 8, "edge_dim": 4, "hidden": hidden, "layers": 1, "attn_layers": 1, "heads": 2, "dropout": 0.0}
    model = build_edit_model(hp).eval()
    args = _random_pairs(model, 20_001)
    with torch.no_grad():
        want = model.pair_head(model._pair_input(*args))
        for chunk in (64, 1000, 4096, 10_000, 20_000, 20_001, 1_000_000):
            got = model._pair_logits(*args, chunk=chunk)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert torch.equal(got, want), f"chunk {chunk}"
    with pytest.raises(ValueError, match="positive"):
        model._pair_logits(*args, chunk=0)


@pytest.mark.unit
def test_no_pairs_and_gradients_through_chunks() -> None:
    torch.manual_seed(0)
    hp = {"x_dim": 8, "edge_dim": 4, "hidden": 16, "layers": 1, "attn_layers": 1, "heads": 2, "dropout": 0.0}
    model = build_edit_model(hp).eval()
    g, i, j, cur, dist = _random_pairs(model, 500, atoms=40)
    empty = model._pair_logits(g, i[:0], j[:0], cur[:0], dist[:0], chunk=64)
    assert empty.shape == (0, model.pair_head[-1].out_features)
    g1 = g.clone().requires_grad_(True)
    g2 = g.clone().requires_grad_(True)
    model._pair_logits(g1, i, j, cur, dist, chunk=64).square().sum().backward()
    model._pair_logits(g2, i, j, cur, dist, chunk=10_000).square().sum().backward()
    assert torch.allclose(g1.grad, g2.grad, rtol=1e-5, atol=1e-6)


@pytest.mark.integration
def test_bundled_model_and_beam_are_unchanged_by_small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Real reactions (one with 40 carbons: 1,700 pairs in a batch of 3,000) through the bundled model and the
    beam, with the default chunk and with chunks of 256 pairs: identical logits and identical candidates."""
    pred = ed.EditPredictor(ed.load_predictor(ed.BUNDLED_CHECKPOINT).model)
    items = []
    for r, g in REACTIONS:
        graphs = [pred.cache.get(s) for s in (*r, *g)]
        items.append(([int(x[0]["z"].numel()) for x in graphs[: len(r)]], graphs))
    batch, _ = ed._collate_reactions(items)
    assert batch.pair_index.size(1) > 2_000
    with torch.no_grad():
        want = pred.model(batch)
        monkeypatch.setattr(em, "PAIR_CHUNK", 256)
        got = pred.model(batch)
    for k in want:
        assert torch.equal(got[k], want[k]), k
    small = [[(c.products, c.score) for c in cands] for cands in pred.predict(REACTIONS, beam=3)]
    monkeypatch.setattr(em, "PAIR_CHUNK", 1_000_000)
    whole = [[(c.products, c.score) for c in cands] for cands in pred.predict(REACTIONS, beam=3)]
    assert small == whole and any(whole)


_PEAK = textwrap.dedent(
    """
    import json, resource, sys, time
    import torch
    torch.set_num_threads(1)
    from gnn_chemalgebra.inference.edit_decode import BUNDLED_CHECKPOINT, EditPredictor
    pred = EditPredictor.from_checkpoint(BUNDLED_CHECKPOINT)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.perf_counter()
    cands = pred.predict([(["C" * int(sys.argv[1])], [])], beam=1)
    print(json.dumps({"before_kb": before, "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                      "s": time.perf_counter() - t, "n": len(cands[0])}))
    """
)


@pytest.mark.integration
def test_a_1000_atom_chain_stays_in_bounded_memory() -> None:
    """500,000 pairs: about 2 GB of pair-head temporaries in one call, a few hundred MB in chunks."""
    out = subprocess.run(
        [sys.executable, "-c", _PEAK, "1000"], capture_output=True, text=True, check=True, timeout=600
    ).stdout
    got = json.loads(out.strip().splitlines()[-1])
    assert got["peak_kb"] - got["before_kb"] < 600_000, got
