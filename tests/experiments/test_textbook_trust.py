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
