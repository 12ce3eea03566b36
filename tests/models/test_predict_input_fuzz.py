"""Fuzzing the predictor's input parser: arbitrary text becomes an example or the project's own error."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.inference.run import parse_input_line

pytestmark = pytest.mark.unit

ALPHABET = st.sampled_from(list("{}0123456789.CcNnOoHh[]()=#+-@/\\ClBrNa>*%: "))
line_like = st.lists(ALPHABET, max_size=40).map("".join)


@pytest.mark.parametrize("model_repr", ["smiles", "formula"])
@settings(max_examples=200, deadline=None)
@given(text=st.one_of(line_like, st.text(max_size=40)))
def test_arbitrary_input_line_is_parsed_or_refused(model_repr: str, text: str) -> None:
    try:
        ex = parse_input_line(text, model_repr, 1, path="input.smi", line=3)
    except InputError as err:
        assert str(err).startswith("input.smi:3:")
        return
    assert ex.terms and all(t.coef >= 1 for t in ex.terms)
