"""``experiments/chemist_baseline.py``: main product right reads the written line's molecules and coefficients, and
the scores of a small prediction folder count exact matches, main products and lines written unchanged."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.unit

META = {"main_products": [["CCOC(C)=O", 2]], "byproducts": [["O", 2]]}


def test_main_product_right_needs_the_molecule_and_its_coefficient(experiment) -> None:  # noqa: ANN001
    right = experiment("chemist_baseline").main_product_right
    assert right("{2}O=C(C)OCC.{2}[O][O]", META, "smiles")  # another SMILES of the ester; by-product wrong
    assert not right("{1}CCOC(C)=O.{2}O", META, "smiles")  # wrong coefficient
    assert not right("{2}CCOC(=O)CC.{2}O", META, "smiles")  # wrong molecule
    assert right("{2}C4H8O2.{2}H2O", {"main_products": [["C4H8O2", 2]]}, "formula")


def test_scores_of_a_prediction_folder(experiment, tmp_path) -> None:  # noqa: ANN001
    chem, pred = tmp_path / "chem", tmp_path / "pred"
    (chem / "smiles").mkdir(parents=True)
    pred.mkdir()
    src = ["{2}CC(=O)O.{2}CCO", "{1}CC(=O)O.{1}CCO"]
    tgt = ["{2}CCOC(C)=O.{2}O", "{1}CCOC(C)=O.{1}O"]
    (chem / "smiles" / "src-test.txt").write_text("\n".join(src) + "\n")
    (chem / "smiles" / "tgt-test.txt").write_text("\n".join(tgt) + "\n")
    metas = [{"main_products": [["CCOC(C)=O", k]]} for k in (2, 1)]
    (chem / "smiles" / "meta-test.jsonl").write_text("\n".join(json.dumps(m) for m in metas) + "\n")
    (pred / "pred-smiles-test.txt").write_text("{2}CCOC(C)=O.{2}[O]\n{1}CC(=O)O.{1}CCO\n")  # main right; fallback
    scores = experiment("chemist_baseline").score(chem, pred)
    s = scores["smiles"]
    assert s["lines"] == 2 and s["EM"] == 0.0 and s["main_product_right"] == 50.0 and s["unchanged_lines"] == 1
    assert "formula" not in scores
