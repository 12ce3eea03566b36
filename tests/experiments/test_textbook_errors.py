"""``experiments/textbook_errors.py``: right lines per area and style, and wrong lines that write a radical filler."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.unit


def _rec(area: str, style: str, prediction: str, right: bool, **more: object) -> dict:
    return {"area": area, "style": style, "prediction": prediction, "right": right, "refused": False, **more}


def test_summary_counts_areas_and_fillers(experiment, tmp_path) -> None:  # noqa: ANN001
    t = experiment("textbook_errors")
    recs = [
        _rec("organic", "smiles", "{1}CCOC(C)=O.{1}O", True),
        _rec("organic", "smiles", "{1}CCO.{1}CC=O.{1}[O]", False),  # a radical filler
        _rec("organic", "reaction", "{1}CCNCc1ccccc1.{1}O", False),  # wrong, real molecules
        _rec("general", "reaction", "{1}C.{1}O", False, fallback=True),  # a fallback: left out
        _rec("general", "formula", "{1}CO2.{1}O", False),  # formulas: left out of the filler count
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    got = t.summary(str(path))
    assert got["right_by_area_style"] == {
        "general/formula": "0/1", "general/reaction": "0/1", "organic/reaction": "0/1", "organic/smiles": "1/2",
    }  # fmt: skip
    assert (got["wrong"], got["with_radical_filler"]) == (2, 1)
