"""Fuzzing: arbitrary prediction text is scored or refused with the project's own error, never a crash."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.evaluation.metrics import evaluate_lines

pytestmark = pytest.mark.unit

TGT = {"smiles": "{2}CCO.{1}[Na+].{3}O", "formula": "{2}C2H6O.{1}Na+.{3}H2O"}
ALPHABET = st.sampled_from(list("{}0123456789.CcNnOoHh[]()=#+-@/\\ClBrNa>*%: \t"))
bag_like = st.lists(ALPHABET, max_size=40).map("".join)


@pytest.mark.parametrize("repr_", ["smiles", "formula"])
@pytest.mark.parametrize("mode", ["paper", "strict"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(bag_like, st.text(max_size=40)))
def test_arbitrary_prediction_scores_or_raises_input_error(repr_: str, mode: str, text: str) -> None:
    if "\n" in text or "\r" in text:
        text = text.replace("\n", " ").replace("\r", " ")
    try:
        out = evaluate_lines([text], [TGT[repr_]], repr_, mode, src_lines=[TGT[repr_]])
    except InputError as err:
        assert str(err)  # a located, readable message
        return
    assert out["n"] == 1
    for key in ("EM", "JAC", "F1", "mol_JAC", "mol_F1"):
        assert 0.0 <= float(out[key]) <= 100.0
