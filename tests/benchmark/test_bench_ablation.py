"""``gnnca bench decode-ablation``: each option combination reaches the model that decodes the variant's lines
(for the bundled formula default on a Type-1 variant, its Type-1 model)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gnn_chemalgebra.benchmark.ablation import COMBOS, decode_ablation
from gnn_chemalgebra.data.dataset import write_toy_variant
from gnn_chemalgebra.inference.predictor import Predictor
from gnn_chemalgebra.inference.run import DEFAULT_CHECKPOINT

pytestmark = pytest.mark.integration


def test_every_combination_reaches_the_type1_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = tmp_path / "built"
    write_toy_variant(built, "ChemAlgebra_F_T1_x1", {"test_in": 3})
    seen = set()
    predict_own = Predictor._predict_own

    def own(self, *a, **k):  # which model decoded, with which options
        seen.add((Path(self.source.checkpoint).name, self.settings.role_evidence, self.settings.valence_check))
        return predict_own(self, *a, **k)

    monkeypatch.setattr(Predictor, "_predict_own", own)
    rows = decode_ablation(DEFAULT_CHECKPOINT, built, "ChemAlgebra_F_T1_x1", ["test_in"], 3)
    assert len(rows) == 1 and rows[0]["n"] == 3
    assert seen == {("gnn_type1_default.pt", *combo) for combo in COMBOS.values()}
