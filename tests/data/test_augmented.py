"""The rewritten training dataset (data/augmented.py): roles are read only when asked for, each access is seeded by
(seed, epoch, line), so a run reproduces and a resumed run continues exactly, and epochs see other rewrites."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from gnn_chemalgebra.data.augmented import AugmentedBagDataset, AugmentSettings
from gnn_chemalgebra.data.dataset import BagDataset, ExtraVocab, load_examples, write_toy_variant
from gnn_chemalgebra.data.featurize import Featurizer

pytestmark = pytest.mark.unit

VARIANT = "ChemAlgebra_S_T2_x1"


def _same(a, b) -> bool:
    return a.keys() == b.keys() and all(
        torch.equal(a[k], b[k]) if isinstance(a[k], torch.Tensor) else a[k] == b[k] for k in a.keys()
    )


def test_rewrites_are_seeded_by_seed_epoch_and_line(tmp_path: Path) -> None:
    write_toy_variant(tmp_path, VARIANT, {"train": 40})
    assert all(ex.src_roles is None for ex in load_examples(tmp_path, VARIANT, "train"))  # not kept unless asked
    exs = load_examples(tmp_path, VARIANT, "train", roles=True)
    assert all(len(ex.src_roles) == len(ex.terms) for ex in exs)
    feat, vocab = Featurizer("smiles"), ExtraVocab.build(exs)
    settings = AugmentSettings(drop_reagents=0.5, salts=0.5)
    ds, again = (AugmentedBagDataset(exs, feat, vocab, settings, "smiles", seed=3) for _ in range(2))
    assert ds.rewritable == len(exs)
    assert all(_same(ds[i], again[i]) for i in range(len(exs)))
    plain = BagDataset(exs, feat, vocab)
    changed = sum(not _same(ds[i], plain[i]) for i in range(len(exs)))
    assert 0 < changed < len(exs)
    before = [ds[i] for i in range(len(exs))]
    ds.set_epoch(1)
    assert any(not _same(ds[i], before[i]) for i in range(len(exs)))  # another epoch, other rewrites
    off = AugmentedBagDataset(exs, feat, vocab, AugmentSettings(), "smiles", seed=3)
    assert all(_same(off[i], plain[i]) for i in range(len(exs)))
