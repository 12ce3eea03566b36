"""The counts of ``experiments/alternatives_consistency.py`` on hand-made records."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.unit


def _rec(prediction: str, rows: list[tuple[str, float]], confidence: float = 0.5) -> dict:
    top = [{"prediction": p, "probability": q} for p, q in rows]
    return {"prediction": prediction, "confidence": confidence, "top_k": top}


def test_outranked_changed_and_tautomer_rows_are_counted(experiment, tmp_path, capsys) -> None:  # noqa: ANN001
    t = experiment("alternatives_consistency")
    few = [_rec("{1}A", [("{1}B", 0.6), ("{1}A", 0.3)]), _rec("{1}C", [("{1}C", 0.7), ("{1}D", 0.2)])]
    many = [
        _rec("{1}A", [("{1}B", 0.6), ("{1}A", 0.3), ("{1}E", 0.05)]),
        _rec("{1}C", [("{1}C", 0.7), ("{1}D", 0.1), ("{1}Cc1nnn[nH]1", 0.05), ("{1}Cc1nn[nH]n1", 0.04)]),
    ]
    got = t.consistency(few, many)
    assert got == {
        "outranked_few": 1,
        "outranked_many": 1,
        "changed_rows": 1,  # D: 0.2 at the smaller K, 0.1 at the larger
        "changed_lines": 1,
        "tautomer_repeats": 1,  # the two tetrazole tautomers
        "lines": 2,
    }
    assert t.same_answers(few, [_rec("{1}A", [], 0.5), _rec("{1}X", [], 0.7)]) == {  # the second: both changed
        "same_prediction": 1,
        "same_confidence": 1,
    }
    for name, recs in (("few", few), ("many", many)):
        (tmp_path / f"{name}.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    assert t.main([str(tmp_path / "few.jsonl"), str(tmp_path / "many.jsonl")]) == 0
    assert json.loads(capsys.readouterr().out)["after"] == got
