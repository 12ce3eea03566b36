"""``predict --workers N``: the same records, in input order, as one process (forked workers on Linux, spawned
ones elsewhere)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gnn_chemalgebra.inference import run
from gnn_chemalgebra.inference.predict_command import predict_lines
from gnn_chemalgebra.inference.predictor import Predictor, PredictorOptions

pytestmark = pytest.mark.integration

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(scope="module")
def predictor() -> Predictor:
    return Predictor.from_checkpoint(run.DEFAULT_CHECKPOINT, options=PredictorOptions(extent="bayes"))


def _records(predictor: Predictor, lines: list[str], **kw) -> list[str]:
    return [json.dumps(r) for r in predict_lines(lines, predictor, source_name="golden", **kw).records]


def test_forked_workers_give_the_records_of_one_process_in_order(predictor: Predictor) -> None:
    lines = (GOLDEN / "formula_t1.in").read_text().splitlines()
    assert run._can_fork(predictor)
    one = _records(predictor, lines, batch_size=40)
    assert _records(predictor, lines, batch_size=40, workers=2) == one
    assert _records(predictor, lines, batch_size=40, workers=3) == one
    assert [json.loads(r)["line"] for r in one] == list(range(1, len(lines) + 1))


def test_spawned_workers_give_the_records_of_one_process(predictor: Predictor, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = (GOLDEN / "formula_t2.in").read_text().splitlines()[:12]
    one = _records(predictor, lines, batch_size=4)
    monkeypatch.setattr(run, "_can_fork", lambda _predictor: False)
    assert _records(predictor, lines, batch_size=4, workers=2) == one
