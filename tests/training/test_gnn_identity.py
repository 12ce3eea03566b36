"""Molecule identity rows (``model.identity_min_count``): which molecules get one, that a start model without them
is reproduced exactly, and that a trained model keeps its keys through the checkpoint."""

from __future__ import annotations

import functools
import shutil
from collections import Counter

import pytest
import torch

from gnn_chemalgebra.checkpoint import load_checkpoint
from gnn_chemalgebra.data.bagbatch import collate_bags
from gnn_chemalgebra.data.dataset import BagDataset, ExtraVocab, load_examples, write_toy_variant
from gnn_chemalgebra.data.featurize import Featurizer
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.inference.runner import load_bag_model
from gnn_chemalgebra.inference.validation import predictor_validator
from gnn_chemalgebra.models.gnn import BagGNNConfig, composition_key_multipliers, composition_keys
from gnn_chemalgebra.training.gnn import identity_keys, structure_rows
from gnn_chemalgebra.training.run import train as train_run

pytestmark = pytest.mark.integration
# the one training entry with whole-line validation, as `gnnca train` calls it
train = functools.partial(train_run, validator=predictor_validator)
VARIANT = "ChemAlgebra_F_T1_x1"  # the toy variant of conftest.py


@pytest.mark.unit
def test_keys_tell_compositions_apart_and_are_fixed() -> None:
    feat = Featurizer("formula")
    rows = torch.stack([feat.molecule(m)[1] for m in ("C2H6O", "C2H6O", "CH4O", "C3H8O", "Cl-", "Cl", "HCl")])
    keys = composition_keys(rows, composition_key_multipliers(rows.size(1))).tolist()
    assert keys[0] == keys[1] and len(set(keys[1:])) == 6
    assert torch.equal(composition_key_multipliers(5), composition_key_multipliers(5))  # no RNG state involved


def test_identity_rows_cover_molecules_seen_often_enough(toy) -> None:
    ex = load_examples(toy, VARIANT, "train")
    feat = Featurizer("formula")
    lines = Counter(m for e in ex for m in set(e.mols))
    mult = composition_key_multipliers(feat.settings()["comp_dim"])
    threshold = sorted(lines.values())[len(lines) // 2] + 1  # about half the molecules fall below it
    for min_count in (1, threshold):
        expected = [m for m, c in lines.items() if c >= min_count]
        rows = torch.stack([feat.molecule(m)[1] for m in expected])
        got = identity_keys(ex, feat, min_count)
        assert got.tolist() == sorted(composition_keys(rows, mult).tolist())
    assert 0 < len(identity_keys(ex, feat, threshold)) < len(lines)


def test_a_start_model_without_identity_is_reproduced_then_the_rows_train(toy, tiny_cfg, tmp_path) -> None:
    train(tiny_cfg(toy, tmp_path / "base", "train.epochs=1"))
    start = tmp_path / "base" / "last.pt"
    train(tiny_cfg(toy, tmp_path / "id0", "train.max_steps=1", "train.lr=0", f"train.init_from={start}",
               "model.identity_min_count=1"))  # fmt: skip
    train(tiny_cfg(toy, tmp_path / "id", "train.epochs=2", f"train.init_from={start}", "model.identity_min_count=1"))
    (ck0, feat, vocab, base), (ck1, _, _, same), (ck2, _, _, tuned) = (
        load_bag_model(str(p / "last.pt")) for p in (tmp_path / "base", tmp_path / "id0", tmp_path / "id")
    )
    n0, n1, n2 = (m.config.encoder.identity_vocab for m in (base, same, tuned))
    assert n0 == 0 and n1 == n2 > 0
    base.eval(), same.eval(), tuned.eval()
    ds = BagDataset(load_examples(toy, VARIANT, "valid"), feat, ExtraVocab(vocab.items[1:]))
    batch = collate_bags([ds[i] for i in range(len(ds))])
    with torch.no_grad():
        a, b, c = base(batch), same(batch), tuned(batch)
    assert torch.allclose(a["role_logits"], b["role_logits"], atol=1e-6)  # zero rows: the start model's function
    assert tuned.ident_emb.weight[1:].abs().sum() > 0 and tuned.ident_emb.weight[0].abs().sum() > 0
    assert not torch.allclose(a["role_logits"], c["role_logits"])
    keys = load_checkpoint(tmp_path / "id" / "last.pt")["model"]["ident_keys"]
    assert torch.equal(tuned.ident_keys, keys) and bool((keys[1:] > keys[:-1]).all())


def test_resume_keeps_the_identity_keys(toy, tiny_cfg, tmp_path) -> None:
    run = tmp_path / "run"
    train(tiny_cfg(toy, run, "train.epochs=1", "model.identity_min_count=1"))
    first = load_checkpoint(run / "last.pt")["model"]["ident_keys"]
    train(tiny_cfg(toy, run, "train.epochs=2", "model.identity_min_count=1"), resume=True)
    assert torch.equal(load_checkpoint(run / "last.pt")["model"]["ident_keys"], first)


def test_fine_tuning_an_identity_model_keeps_its_rows_and_keys(toy, tiny_cfg, tmp_path) -> None:
    train(tiny_cfg(toy, tmp_path / "start", "train.epochs=1", "model.identity_min_count=1"))
    start = load_checkpoint(tmp_path / "start" / "last.pt")
    # no identity_min_count here: the start model's rows are inherited, as its by-product vocabulary is
    train(
        tiny_cfg(
            toy,
            tmp_path / "tuned",
            "train.max_steps=1",
            "train.lr=0",
            f"train.init_from={tmp_path / 'start' / 'last.pt'}",
        )
    )
    tuned = load_checkpoint(tmp_path / "tuned" / "last.pt")
    n_tuned, n_start = (BagGNNConfig.from_meta(ck["meta"]).encoder.identity_vocab for ck in (tuned, start))
    assert n_tuned == n_start > 0
    for k in ("ident_keys", "ident_emb.weight"):
        assert torch.equal(tuned["model"][k], start["model"][k])


@pytest.fixture(scope="module")
def toy_twin(toy):
    """The toy formula lines with their SMILES twin beside them (the same reactions, in the same order)."""
    write_toy_variant(toy, "ChemAlgebra_S_T1_x1", {"train": 40, "valid": 16})
    return toy


def test_structure_rows_start_as_the_identity_model_then_train(toy_twin, tiny_cfg, tmp_path) -> None:
    toy = toy_twin
    train(tiny_cfg(toy, tmp_path / "id", "train.epochs=1", "model.identity_min_count=1"))
    start = tmp_path / "id" / "last.pt"
    same_cfg = ("train.max_steps=1", "train.lr=0", f"train.init_from={start}", "model.structure_bits=64")
    train(tiny_cfg(toy, tmp_path / "s0", *same_cfg))
    train(tiny_cfg(toy, tmp_path / "s", "train.epochs=2", f"train.init_from={start}", "model.structure_bits=64"))
    (ck0, feat, vocab, base), (_, _, _, same), (ck2, _, _, tuned) = (
        load_bag_model(str(p / "last.pt")) for p in (tmp_path / "id", tmp_path / "s0", tmp_path / "s")
    )
    rows = ck2["model"]["ident_struct"]
    n = base.config.encoder.identity_vocab
    assert tuple(rows.shape) == (n + 1, 64) and not rows[0].any() and bool((rows[1:].sum(1) > 0).all())
    ds = BagDataset(load_examples(toy, VARIANT, "valid"), feat, ExtraVocab(vocab.items[1:]))
    batch = collate_bags([ds[i] for i in range(len(ds))])
    base.eval(), same.eval(), tuned.eval()
    with torch.no_grad():
        a, b, c = base(batch), same(batch), tuned(batch)
    assert torch.allclose(a["role_logits"], b["role_logits"], atol=1e-6)  # zero map: the start model's function
    assert tuned.struct_proj.weight.abs().sum() > 0 and not torch.allclose(a["role_logits"], c["role_logits"])
    # a molecule's row is its training structure's fingerprint: rebuilt from the twin, the same rows
    again = structure_rows(ck2["model"]["ident_keys"], Featurizer("formula"), str(toy), VARIANT, "train", 64)
    assert torch.equal(again, rows)


def test_structure_rows_need_identity_rows_and_survive_resume(toy_twin, tiny_cfg, tmp_path) -> None:
    with pytest.raises(InputError, match="identity rows"):
        train(tiny_cfg(toy_twin, tmp_path / "bad", "train.epochs=1", "model.structure_bits=32"))
    run = tmp_path / "run"
    both = ("model.identity_min_count=1", "model.structure_bits=32")
    train(tiny_cfg(toy_twin, run, "train.epochs=1", *both))
    first = load_checkpoint(run / "last.pt")["model"]["ident_struct"]
    assert first[1:].any()
    train(tiny_cfg(toy_twin, run, "train.epochs=2", *both), resume=True)
    assert torch.equal(load_checkpoint(run / "last.pt")["model"]["ident_struct"], first)


def test_a_fine_tune_that_extends_the_vocabulary_keeps_the_start_rows_first(toy, tiny_cfg, tmp_path) -> None:
    """``model.vocab_extend``: the start model's by-products keep their rows and order, the data's new ones follow
    (a chemist's water beside the benchmark's fillers); without it the start's vocabulary is the fine-tune's."""
    train(tiny_cfg(toy, tmp_path / "base", "train.epochs=1", "model.vocab_size=3"))
    start = tmp_path / "base" / "last.pt"
    fine = ("train.max_steps=1", "train.lr=0", f"train.init_from={start}", "model.vocab_size=64")
    train(tiny_cfg(toy, tmp_path / "kept", *fine))
    train(tiny_cfg(toy, tmp_path / "grown", *fine, "model.vocab_extend=true"))
    (_, feat, v0, base), (_, _, v1, _), (_, _, v2, grown) = (
        load_bag_model(str(p / "last.pt")) for p in (tmp_path / "base", tmp_path / "kept", tmp_path / "grown")
    )
    assert v1.items == v0.items and len(v0) == 3
    assert v2.items[: len(v0)] == v0.items and len(v2) > len(v0)
    full = ExtraVocab.build(load_examples(toy, VARIANT, "train"), 64)
    assert set(v2.items) == set(full.items) | set(v0.items)
    n = len(v0)
    assert torch.equal(grown.extra_head[3].weight[:n], base.extra_head[3].weight)
    assert torch.equal(grown.extra_comp[:n], base.extra_comp)
    base.eval(), grown.eval()
    ds = BagDataset(load_examples(toy, VARIANT, "valid"), feat, ExtraVocab(v0.items[1:]))
    batch = collate_bags([ds[i] for i in range(len(ds))])
    with torch.no_grad():
        a, b = base(batch), grown(batch)
    assert torch.allclose(a["extra_logits"], b["extra_logits"][:, :n], atol=1e-6)  # the start's by-products unchanged


def test_an_export_keeps_the_identity_rows_of_common_molecules(toy, tiny_cfg, tmp_path) -> None:
    """``gnnca bench export --identity-min-count N``: the rows of molecules in fewer than N of the run's training
    lines go, the rest keep their vectors; the smaller file loads and reads a molecule without a row as unknown."""
    from typer.testing import CliRunner

    from gnn_chemalgebra.cli import app

    train(tiny_cfg(toy, tmp_path / "run", "train.epochs=2", "model.identity_min_count=1"))
    shutil.copy(tmp_path / "run" / "last.pt", tmp_path / "run" / "best.pt")
    ex = load_examples(toy, VARIANT, "train")
    feat = Featurizer("formula")
    counts = sorted(Counter(m for e in ex for m in set(e.mols)).values())
    n = counts[len(counts) // 2] + 1
    res = CliRunner().invoke(app, ["bench", "export", "--run", str(tmp_path / "run"), "--to", str(tmp_path / "x.pt"),
                                   "--identity-min-count", str(n)])  # fmt: skip
    assert res.exit_code == 0, res.output
    _, _, _, full = load_bag_model(str(tmp_path / "run" / "best.pt"))
    _, _, _, slim = load_bag_model(str(tmp_path / "x.pt"))
    want = identity_keys(ex, feat, n)
    assert torch.equal(slim.ident_keys, want) and 0 < want.numel() < full.ident_keys.numel()
    assert slim.config.encoder.identity_vocab == want.numel()
    rows = torch.searchsorted(full.ident_keys, want) + 1
    assert torch.equal(slim.ident_emb.weight[1:], full.ident_emb.weight[rows])
    assert torch.equal(slim.ident_emb.weight[0], full.ident_emb.weight[0])
    assert load_checkpoint(tmp_path / "x.pt")["meta"]["identity_rows"]["min_count"] == n
