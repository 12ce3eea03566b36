"""The textbook reactions of ``experiments/textbook_trust.py``: each expected line balances its reactants (as
SMILES and as formulas), so a miss is the model's, not the table's."""

from __future__ import annotations

import pytest

from gnn_chemalgebra.chem.molecule import bag_composition

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("repr", ["smiles", "formula"])
def test_every_expected_line_balances_its_source(experiment, repr: str) -> None:  # noqa: ANN001
    rows = experiment("textbook_trust").lines(repr)
    assert len(rows) == 16 and len({name for name, _, _ in rows}) == 16
    for name, src, tgt in rows:
        assert bag_composition(src, repr) == bag_composition(tgt, repr), name


def test_the_table_flags_wrong_unflagged_lines(experiment) -> None:  # noqa: ANN001
    t = experiment("textbook_trust")
    row = {"reaction": "x", "repr": "smiles", "right": False, "confidence": 0.9, "in_domain": True}
    text = t.markdown([{**row, "nearest_training_similarity": 0.5, "flagged": False}])
    assert text.splitlines()[-1].endswith("| **yes** |")


def test_one_model_rerun_keeps_the_other_models_rows(experiment, tmp_path, monkeypatch, capsys) -> None:  # noqa: ANN001
    import json

    t = experiment("textbook_trust")
    out = tmp_path / "textbook.json"

    def fake(repr: str, right: bool) -> list[dict]:
        return [{"reaction": "r", "repr": repr, "right": right, "confidence": 0.9, "in_domain": True,
                 "nearest_training_similarity": 0.5, "flagged": False}]  # fmt: skip

    monkeypatch.setattr(t, "run", lambda repr, reactions: fake(repr, True))
    no_train = ["--train", str(tmp_path / "absent.jsonl")]
    assert t.main(["--out", str(out), *no_train]) == 0
    monkeypatch.setattr(t, "run", lambda repr, reactions: fake(repr, False) if repr == "smiles" else pytest.fail(repr))
    assert t.main(["--out", str(out), "--repr", "smiles", *no_train]) == 0
    d = json.loads(out.read_text())
    assert [(r["repr"], r["right"]) for r in d["rows"]] == [("smiles", False), ("formula", True)]
    assert (d["lines"], d["wrong"], d["wrong_and_unflagged"]) == (2, 1, 1)
    capsys.readouterr()
