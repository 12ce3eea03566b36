"""The trust stage of prediction: a predictor's sidecars apply only with the models and decode settings they were
fitted with."""

from __future__ import annotations

from pathlib import Path

import pytest

from gnn_chemalgebra.inference.trust_stage import (
    changed_settings,
    decode_settings,
    edit_model_sha256,
    fitted_settings,
    trust_for,
)
from gnn_chemalgebra.trust.annotate import Trust
from gnn_chemalgebra.trust.calibrators import TYPE1, Calibrator
from gnn_chemalgebra.trust.linear import LinearModel

pytestmark = pytest.mark.unit


def test_a_smiles_calibration_is_bound_to_its_edit_model(tmp_path: Path) -> None:
    from types import SimpleNamespace

    ckpt, edit_a, edit_b = tmp_path / "gnn.pt", tmp_path / "edit_a.pt", tmp_path / "edit_b.pt"
    for p, data in ((ckpt, b"gnn"), (edit_a, b"edits a"), (edit_b, b"edits b")):
        p.write_bytes(data)

    def predictor(edit: Path) -> SimpleNamespace:
        src = SimpleNamespace(checkpoint=str(ckpt), edit_checkpoint=str(edit))
        return SimpleNamespace(repr="smiles", source=src, type1=None, saved_settings=None)

    flat = LinearModel([0.0] * 11, [1.0] * 11, [0.0] * 11, 0.0)
    Trust("smiles", Calibrator({TYPE1: flat}), meta={"edit_sha256": edit_model_sha256(predictor(edit_a))}).save(ckpt)
    assert trust_for(predictor(edit_a)) is not None
    assert trust_for(predictor(edit_b)) is None  # product graphs from another edit model: not calibrated


def test_changed_settings_against_the_recorded_or_the_saved_ones() -> None:
    from types import SimpleNamespace

    from gnn_chemalgebra.config import DecodeConfig

    saved = DecodeConfig(balance_beam=4, type1_model="t1.pt")
    t1 = SimpleNamespace(settings=DecodeConfig(), saved_settings=DecodeConfig(), type1=None)
    pred = SimpleNamespace(settings=DecodeConfig(balance_beam=4, type1_model="t1.pt"), saved_settings=saved, type1=t1)
    assert "type1_model" not in decode_settings(saved) and "beam" not in decode_settings(saved)
    assert changed_settings(pred, {}) == ()  # nothing recorded: the checkpoints' saved settings
    pred.settings.balance_beam, t1.settings.evidence_floor = 8, -40.0
    assert changed_settings(pred, {}) == ("decode.balance_beam", "decode (Type-1 model).evidence_floor")
    recorded = fitted_settings(pred)  # a calibration fitted with these very settings
    assert changed_settings(pred, recorded) == ()
    pred.settings.beam = 3  # the sequence model's beam writes no GNN line
    assert changed_settings(pred, recorded) == ()
