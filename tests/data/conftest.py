"""Fixtures of the data tests: toy bags of four variants, featurised, for the collation tests."""

from __future__ import annotations

import pytest

TOY_VARIANTS = ["ChemAlgebra_F_T1_x1", "ChemAlgebra_F_T2_x5", "ChemAlgebra_S_T1_x1", "ChemAlgebra_S_T2_x1"]


@pytest.fixture(scope="module", params=TOY_VARIANTS)
def toy_bags(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """``(examples, featurizer, vocabulary)`` of 120 toy training lines of one variant."""
    from gnn_chemalgebra.data.dataset import ExtraVocab, load_examples, write_toy_variant
    from gnn_chemalgebra.data.featurize import Featurizer

    out = tmp_path_factory.mktemp("toy")
    write_toy_variant(out, request.param, {"train": 120})
    exs = load_examples(out, request.param, "train")
    feat = Featurizer("smiles" if "_S_" in request.param else "formula")
    return exs, feat, ExtraVocab.build(exs)
