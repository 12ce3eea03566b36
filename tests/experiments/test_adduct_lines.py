"""``experiments/adduct_lines.py``: which written lines count as one adduct, and the per-kind exact match."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.unit


def _rec(line: int, prediction: str, consumed: list[str], new: list[str], confidence: float) -> dict:
    mols = [{"mol": m, "nu": -1} for m in consumed]
    return {"line": line, "prediction": prediction, "molecules": mols, "new_products": new, "confidence": confidence}


def test_an_adduct_is_one_new_molecule_from_two_consumed(experiment) -> None:  # noqa: ANN001
    t = experiment("adduct_lines")
    assert t.is_adduct(_rec(1, "{1}C6H12O4", ["C4H6O3", "C2H6O"], ["C6H12O4"], 0.8))
    assert not t.is_adduct(_rec(1, "{1}HCl.{1}C9H11NO", ["C2H3ClO", "C7H9N"], ["HCl", "C9H11NO"], 0.8))
    assert not t.is_adduct(_rec(1, "{1}C2H6O", ["C2H4O"], ["C2H6O"], 0.8))


def test_exact_match_per_kind(experiment, tmp_path) -> None:  # noqa: ANN001
    t = experiment("adduct_lines")
    recs = [
        _rec(1, "{1}C6H12O4", ["C4H6O3", "C2H6O"], ["C6H12O4"], 0.9),  # adduct, wrong
        _rec(2, "{1}C11H13NO3", ["C4H4O3", "C7H9N"], ["C11H13NO3"], 0.5),  # adduct, right
        _rec(3, "{1}HCl.{1}C9H11NO", ["C2H3ClO", "C7H9N"], ["HCl", "C9H11NO"], 0.7),  # other, right
    ]
    path = tmp_path / "F_T1_x1-valid.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    tgt = tmp_path / "tgt.txt"
    tgt.write_text("{1}C4H8O2.{1}C2H4O2\n{1}C11H13NO3\n{1}HCl.{1}C9H11NO\n")
    m = t.measure(path, tgt, "formula")
    assert m["adduct"] == {"lines": 2, "EM": 50.0, "mean_confidence": 70.0}
    assert m["adduct, confidence >= 0.6"]["EM"] == 0.0
    assert m["other"]["EM"] == 100.0
