"""Property tests: arbitrary text gives a result or an InputError, and round trips are identities."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gnn_chemalgebra.chem.bag import Term, format_bag, parse_bag
from gnn_chemalgebra.chem.bagfile import parse_reaction_input
from gnn_chemalgebra.chem.formula import ELEMENTS, parse_formula, write_formula
from gnn_chemalgebra.chem.molecule import canonical
from gnn_chemalgebra.errors import InputError

pytestmark = pytest.mark.unit

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text biased towards the grammar's own characters, plus anything at all.
_ALPHABET = st.sampled_from(list("{}.0123456789-+[]()=#@>/\\: \t\nCcHONSPFIlBrNaeK*%") + ["Cl", "Br", "Xx", "H2O"])
grammar_text = st.lists(_ALPHABET, max_size=30).map("".join)
any_text = st.one_of(st.text(max_size=40), grammar_text)


def _ok_or_input_error(fn: Callable[..., object], *args: object, **kwargs: object) -> None:
    """Call ``fn``; an InputError (or subclass) is fine, any other exception fails the test."""
    try:
        fn(*args, **kwargs)
    except InputError:
        pass


@FUZZ
@given(any_text)
def test_parse_bag_never_crashes(text: str) -> None:
    _ok_or_input_error(parse_bag, text)
    _ok_or_input_error(parse_bag, text, default_coef=1, path="f.txt", line=2)


@FUZZ
@given(any_text)
def test_parse_formula_never_crashes(text: str) -> None:
    _ok_or_input_error(parse_formula, text)


@FUZZ
@given(any_text)
def test_canonical_never_crashes(text: str) -> None:
    _ok_or_input_error(canonical, text, "smiles")
    _ok_or_input_error(canonical, text, "formula")


@FUZZ
@given(any_text)
def test_parse_reaction_input_never_crashes(text: str) -> None:
    _ok_or_input_error(parse_reaction_input, text)
    _ok_or_input_error(parse_reaction_input, text, "formula")


@FUZZ
@given(any_text)
def test_located_errors_start_with_place(text: str) -> None:
    try:
        parse_bag(text, path="f.txt", line=9)
    except InputError as err:
        assert str(err).startswith("f.txt:9: ")


_MOL = st.text(
    alphabet=st.characters(blacklist_characters="{}.", blacklist_categories=("Zs", "Zl", "Zp", "Cc", "Cs")),
    min_size=1,
    max_size=12,
)
terms = st.lists(st.builds(Term, st.integers(1, 10**12), _MOL), min_size=1, max_size=6)


@FUZZ
@given(terms)
def test_bag_round_trip(bag: list[Term]) -> None:
    text = format_bag(bag)
    assert parse_bag(text) == bag
    assert format_bag(parse_bag(text)) == text


@FUZZ
@given(any_text)
def test_parsed_bag_reformats_identically(text: str) -> None:
    try:
        bag = parse_bag(text)
    except InputError:
        return
    assert parse_bag(format_bag(bag)) == bag


compositions = st.dictionaries(
    st.sampled_from(sorted(ELEMENTS - {"D", "T"})), st.integers(1, 500), min_size=1, max_size=6
)


@FUZZ
@given(compositions, st.integers(-4, 4))
def test_write_then_parse_formula(comp: dict[str, int], charge: int) -> None:
    full = dict(comp, charge=charge) if charge else dict(comp)
    text = write_formula(full)
    assert parse_formula(text) == full
    assert write_formula(parse_formula(text)) == text


@FUZZ
@given(any_text)
def test_formula_rewrite_reparses_to_same_composition(text: str) -> None:
    try:
        comp = parse_formula(text)
    except InputError:
        return
    canon = write_formula(comp)
    assert parse_formula(canon) == comp
    assert canonical(canon, "formula") == canon
