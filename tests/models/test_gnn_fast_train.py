"""The GNN's training-mode fast paths are the same function as eval mode: with dropout off, a forward in train
mode and one in eval mode give the same outputs and the same parameter gradients (float32: the model casts its
composition features to float, so to rounding)."""

from __future__ import annotations

import pytest
import torch

from gnn_chemalgebra.data.bagbatch import collate_bags
from gnn_chemalgebra.data.dataset import BagDataset, ExtraVocab, load_examples, write_toy_variant
from gnn_chemalgebra.data.featurize import Featurizer
from gnn_chemalgebra.models.gnn import BagGNNConfig, build_model

pytestmark = pytest.mark.unit


def test_train_mode_equals_eval_mode_without_dropout(tmp_path) -> None:
    write_toy_variant(tmp_path, "ChemAlgebra_F_T1_x1", {"train": 24})
    exs = load_examples(tmp_path, "ChemAlgebra_F_T1_x1", "train")
    feat = Featurizer("formula")
    vocab = ExtraVocab.build(exs)
    hp = BagGNNConfig.from_settings(
        {"hidden": 16, "layers": 2, "heads": 2, "dropout": 0.0}, feat.settings(), len(vocab)
    )
    torch.manual_seed(0)
    model = build_model(hp)
    batch = collate_bags(BagDataset(exs, feat, vocab).data[:12])
    results = []
    for train in (True, False):
        model.train(train)
        out = model(batch)
        loss = sum(v.square().sum() for k, v in out.items() if v.is_floating_point())
        results.append((out, torch.autograd.grad(loss, list(model.parameters()), allow_unused=True)))
    (fast, g_fast), (slow, g_slow) = results
    assert fast.keys() == slow.keys() and "left_logits" in fast
    for k in fast:
        torch.testing.assert_close(fast[k], slow[k], rtol=1e-4, atol=1e-5)
    for a, b in zip(g_fast, g_slow, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
