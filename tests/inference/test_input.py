"""The one parser of predict's input: per-line representation, one representation per input, located refusals."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gnn_chemalgebra.chem.bag import Term
from gnn_chemalgebra.chem.bagfile import read_line, read_reaction_lines
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.inference.run import example_from_line, to_example

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("CCO.CC(=O)O", "smiles"),
        ("C1CC", None),  # broken SMILES (ring not closed); not the formula C3: a formula never writes a count of 1
        ("C2CC", "formula"),  # broken SMILES, yet a (non-canonical) formula
        ("CCO", "smiles"),  # a SMILES that only happens to parse as the formula C2O
        ("CO", "both"),
        ("H2O.{2}Na+", "formula"),
        ("Ca(OH)2", "formula"),
        ("CC>O>", "smiles"),
        ("H2O.CCO", None),  # one term of each: neither reading covers the line
    ],
)
def test_line_kind(line: str, kind: str | None) -> None:
    assert read_line(line).kind == kind


def test_smiles_line_is_never_read_as_formula_in_a_smiles_input() -> None:
    """A line that reads only as formulas ('H2O') does not turn an input with a SMILES-only line into formulas."""
    read = read_reaction_lines(["H2O", "CCO.CC(=O)O"], path="in.smi", skip_invalid=True)
    assert read.repr == "smiles"
    assert [(n, i.terms) for n, i in read.inputs] == [(2, [Term(1, "CCO"), Term(1, "CC(=O)O")])]
    (err,) = read.refused
    assert str(err).startswith("in.smi:1: not SMILES") and "line 2 reads only as SMILES" in err.reason


def test_mixed_input_is_an_error_naming_the_line() -> None:
    with pytest.raises(InputError) as info:
        read_reaction_lines(["{1}CCO.{1}O", "# comment", "", "{2}CH4.{1}O2"], path="mix.txt")
    assert str(info.value).startswith("mix.txt:4: ") and "mixed representations" in info.value.reason


def test_formula_input_reads_ambiguous_lines_as_formulas() -> None:
    read = read_reaction_lines(["{1}CH4.{2}O2", "{1}CO.{1}O"])  # CO: carbon monoxide here, not methanol
    assert read.repr == "formula" and [i.repr for _, i in read.inputs] == ["formula", "formula"]
    assert read.inputs[1][1].terms == [Term(1, "CO"), Term(1, "O")]


def test_forced_repr_and_every_refusal_says_why() -> None:
    read = read_reaction_lines(["CCO", "H2O", "CC>>", "{0}C", "C C"], "smiles", path="f", skip_invalid=True)
    assert [n for n, _ in read.inputs] == [1, 3]
    reasons = {e.line: e.reason for e in read.refused}
    assert "RDKit" in reasons[2] and "positive" in reasons[4] and "whitespace" in reasons[5]
    read = read_reaction_lines(["CCO", "CC>>"], "formula", skip_invalid=True)
    assert read.inputs[0][1].terms == [Term(1, "C2O")] and "reaction SMILES" in read.refused[0].reason
    with pytest.raises(InputError, match="--repr must be"):
        read_reaction_lines(["C"], "inchi")


def test_to_example_refuses_a_line_in_the_other_representation() -> None:
    """The checkpoint fixes the representation: SMILES are not turned into formulas, nor formulas into graphs."""
    (inp,) = [i for _, i in read_reaction_lines(["{2}CCO.{2}O"]).inputs]
    with pytest.raises(InputError, match="this checkpoint reads formulas; the line is SMILES"):
        to_example(inp, "formula", 2)
    (inp,) = [i for _, i in read_reaction_lines(["{7}H2O"]).inputs]
    assert to_example(inp, "formula", 2).cset == "out"
    with pytest.raises(InputError, match="this checkpoint reads SMILES; the line is formulas"):
        to_example(inp, "smiles", 2)


ALPHABET = st.sampled_from(list("{}0123456789.CcNnOoHh[]()=#+-@/\\ClBrNa>*%: "))
line_like = st.lists(ALPHABET, max_size=40).map("".join)


@pytest.mark.parametrize("model_repr", ["smiles", "formula"])
@settings(max_examples=200, deadline=None)
@given(text=st.one_of(line_like, st.text(max_size=40)))
def test_arbitrary_input_line_is_parsed_or_refused(model_repr: str, text: str) -> None:
    try:
        ex = example_from_line(text, model_repr, 1, path="input.smi", line=3)
    except InputError as err:
        assert str(err).startswith("input.smi:3:")
        return
    assert ex.terms and all(t.coef >= 1 for t in ex.terms)


@settings(max_examples=100, deadline=None)
@given(lines=st.lists(st.one_of(line_like, st.sampled_from(["CCO", "H2O", "CO", "C1CC", "CC>>"])), max_size=6))
def test_arbitrary_file_is_read_or_refused_line_by_line(lines: list[str]) -> None:
    read = read_reaction_lines(lines, path="f", skip_invalid=True)
    body = [i for i, t in enumerate(lines, 1) if t.strip() and not t.lstrip().startswith("#")]
    assert sorted([n for n, _ in read.inputs] + [e.line for e in read.refused]) == body
    assert all(i.repr == read.repr for _, i in read.inputs)


def test_a_recurring_term_is_read_once_and_refused_alike_every_time() -> None:
    """SMILES readings are cached per term string; a refusal still comes back as a fresh error with the same
    message on every line (not one shared exception object)."""
    from gnn_chemalgebra.chem.bagfile import _smiles_reading

    _smiles_reading.cache_clear()
    first, again = read_line("C2CC.CCO"), read_line("C2CC.{2}CCO")
    assert first.smiles_error is not None and again.smiles_error is not None
    assert first.smiles_error is not again.smiles_error and str(first.smiles_error) == str(again.smiles_error)
    assert type(first.smiles_error) is type(again.smiles_error)
    assert _smiles_reading.cache_info().misses == 2 and _smiles_reading.cache_info().hits == 2
    assert [t.mol for t in again.formula.terms] == ["C4", "C2O"]  # the formula reading is untouched
    with pytest.raises(InputError, match=re.escape(first.smiles_error.reason)):
        read_reaction_lines(["C2CC.CCO"], "smiles", path="x")
