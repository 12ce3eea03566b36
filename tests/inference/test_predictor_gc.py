"""Predictor.predict runs each chunk with the cyclic garbage collector off and leaves it as it found it."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from gnn_chemalgebra import load_predictor
from gnn_chemalgebra.inference.predictor import Predictor

pytestmark = pytest.mark.integration

LINES = (Path(__file__).parent / "golden" / "smiles_t1.in").read_text(encoding="utf-8").splitlines()[:3]


@pytest.mark.parametrize("enabled", [True, False])
def test_collector_off_per_chunk_and_restored(monkeypatch: pytest.MonkeyPatch, enabled: bool) -> None:
    pred = load_predictor()
    seen: list[bool] = []
    decode_one = Predictor.decode_one

    def spy(self: Predictor, *args: object, **kw: object) -> object:
        seen.append(gc.isenabled())
        return decode_one(self, *args, **kw)

    monkeypatch.setattr(Predictor, "decode_one", spy)
    was = gc.isenabled()
    try:
        if not enabled:
            gc.disable()
        first = pred.predict(LINES)
        assert gc.isenabled() is enabled
    finally:
        if was:
            gc.enable()
    assert seen and not any(seen)
    monkeypatch.setattr(Predictor, "decode_one", decode_one)
    assert pred.predict(LINES) == first
