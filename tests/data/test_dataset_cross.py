"""Type 1: the cross split is the same input for the coefficient-blind network (why one model serves both).

``gnnca bench run`` (``--t1-cross-from-std``, the default) scores ``test_cross`` of a Type-1 variant with the
standard model; that is exact only if ``train_cross``/``valid_cross`` featurise to the very tensors of
``train``/``valid`` (everything but the raw coefficients, which only the algebra and the naive ablation read).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from gnn_chemalgebra.data.dataset import ExtraVocab, load_examples, to_data
from gnn_chemalgebra.data.featurize import Featurizer

RAW_ONLY = {"mol_raw", "mol_coef", "y_coef", "y_newcoef"}  # read by the naive head / the algebra only


def _tensors(built: Path, variant: str, split: str) -> list[dict[str, torch.Tensor]]:
    exs = load_examples(built, variant, split)
    feat = Featurizer("formula" if "_F_" in variant else "smiles")
    vocab = ExtraVocab.build(load_examples(built, variant, "train"), 512, 1)
    out = []
    for i, ex in enumerate(exs):
        d = to_data(ex, feat, vocab, i)
        out.append({k: v for k, v in d.items() if torch.is_tensor(v) and k not in RAW_ONLY})
    return out


def _same(a: list[dict[str, torch.Tensor]], b: list[dict[str, torch.Tensor]]) -> bool:
    return len(a) == len(b) and all(
        x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x) for x, y in zip(a, b, strict=True)
    )


@pytest.mark.integration
@pytest.mark.parametrize("variant", ["ChemAlgebra_F_T1_x1", "ChemAlgebra_S_T1_x5"])
def test_type1_cross_splits_featurise_like_standard(built_small: Path, variant: str) -> None:
    for std, cross in (("train", "train_cross"), ("valid", "valid_cross")):
        assert _same(_tensors(built_small, variant, std), _tensors(built_small, variant, cross)), (std, cross)


@pytest.mark.integration
def test_type2_cross_splits_differ(built_small: Path) -> None:
    """The check can fail: Type 2 draws differ between the splits, and so do their multiplicity features."""
    v = "ChemAlgebra_F_T2_x1"
    assert not _same(_tensors(built_small, v, "train"), _tensors(built_small, v, "train_cross"))
