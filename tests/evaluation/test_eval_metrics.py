"""Evaluator metrics: the worked example, paper vs strict defects, located errors, rates, top-k."""

from __future__ import annotations

import pytest

from gnn_chemalgebra.chem.bag import Term
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.evaluation.metrics import (
    balance_class,
    evaluate_lines,
    parse_prediction,
    score_lines,
    score_pair,
)

pytestmark = pytest.mark.unit

MODES = ("paper", "strict")


def _ev(pred: list[str], tgt: list[str], repr: str = "smiles", mode: str = "paper", **kw) -> dict:
    return evaluate_lines(pred, tgt, repr, mode, **kw)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- worked example (doc §5)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "repr,pred,tgt",
    [
        ("formula", "{3}H2O.{2}HCl.{1}CO2", "{2}H2O.{2}HCl.{1}CH4"),
        ("smiles", "{3}O.{2}Cl.{1}O=C=O", "{2}O.{2}Cl.{1}C"),
        ("smiles", "{1}C(=O)=O.{2}Cl.{3}[H]O[H]", "{1}C.{2}O.{2}Cl"),  # order and spelling do not matter
    ],
)
def test_worked_example(mode: str, repr: str, pred: str, tgt: str) -> None:
    r = _ev([pred], [tgt], repr, mode)
    assert r["n"] == 1
    assert r["EM"] == 0.0
    assert round(r["JAC"], 2) == 57.14
    assert round(r["F1"], 2) == 72.73
    assert round(r["mol_JAC"], 2) == 50.00
    assert round(r["mol_F1"], 2) == 66.67
    assert r["VAL"] == 100.0


def test_worked_example_counts() -> None:
    pred = [Term(3, "H2O"), Term(2, "HCl"), Term(1, "CO2")]
    true = [Term(2, "H2O"), Term(2, "HCl"), Term(1, "CH4")]
    for mode in MODES:
        c = score_pair(pred, true, mode)  # type: ignore[arg-type]
        assert (c.tp, c.fp, c.fn) == (4, 2, 1)
        assert (c.mol_tp, c.mol_fp, c.mol_fn) == (2, 1, 1)
        assert not c.em


def test_exact_match_and_averaging() -> None:
    r = _ev(["{2}O.{1}C", "{1}N"], ["{1}C.{2}O", "{1}O"])
    assert r["EM"] == 50.0 and r["JAC"] == 50.0 and r["F1"] == 50.0
    assert r["topk"] == {"1": 50.0}


# --------------------------------------------------------------------------- paper vs strict
def test_unparsable_smiles_dropped_in_paper_counted_in_strict() -> None:
    pred, tgt = ["{2}O.{3}C1CC"], ["{2}O"]
    paper, strict = _ev(pred, tgt, mode="paper"), _ev(pred, tgt, mode="strict")
    assert paper["EM"] == 100.0 and paper["JAC"] == 100.0
    assert strict["EM"] == 0.0
    assert strict["JAC"] == pytest.approx(100 * 2 / 5)  # tp 2, fp 3
    assert strict["mol_JAC"] == pytest.approx(50.0)
    assert paper["VAL"] == strict["VAL"] == 0.0


def test_bare_term_dropped_in_paper_read_as_one_in_strict() -> None:
    pred, tgt = ["{2}O.C"], ["{2}O.{1}C"]
    assert _ev(pred, tgt, mode="paper")["EM"] == 0.0
    assert _ev(pred, tgt, mode="strict")["EM"] == 100.0
    assert _ev(pred, tgt, mode="strict")["VAL"] == 0.0  # the benchmark format needs {k}


def test_duplicates_order_dependent_in_paper_only() -> None:
    tgt = ["{2}O.{3}O"]
    assert _ev(["{2}O.{3}O"], tgt, mode="paper")["EM"] == 100.0
    assert _ev(["{3}O.{2}O"], tgt, mode="paper")["EM"] == 0.0
    assert _ev(["{5}O"], tgt, mode="paper")["EM"] == 0.0
    for pred in ("{2}O.{3}O", "{3}O.{2}O", "{5}O", "{1}O.{4}O"):
        assert _ev([pred], tgt, mode="strict")["EM"] == 100.0


def test_formula_string_vs_canonical() -> None:
    pred, tgt = ["{1}OH2"], ["{1}H2O"]
    assert _ev(pred, tgt, "formula", "paper")["EM"] == 0.0
    assert _ev(pred, tgt, "formula", "strict")["EM"] == 100.0
    # An invalid formula string matches nothing in either mode: it is a false positive.
    for mode in MODES:
        r = _ev(["{1}H2O.{1}Xq"], tgt, "formula", mode)
        assert r["JAC"] == 50.0 and r["VAL"] == 0.0


def test_coefficient_without_molecule() -> None:
    # "{3}" is a well-formed coefficient followed by an empty (unparsable) molecule.
    assert _ev(["{1}O.{3}"], ["{1}O"], mode="paper")["EM"] == 100.0
    assert _ev(["{1}O.{3}"], ["{1}O"], mode="strict")["JAC"] == 25.0


@pytest.mark.parametrize("mode", MODES)
def test_empty_prediction_predicts_nothing(mode: str) -> None:
    r = _ev(["", "{1}O"], ["{2}O.{1}C", "{1}O"], mode=mode)
    assert r["EM"] == 50.0 and r["JAC"] == 50.0 and r["VAL"] == 50.0


@pytest.mark.parametrize("mode", MODES)
def test_tokenized_prediction_and_empty_terms(mode: str) -> None:
    assert _ev(["{2} O . { 1 } C"], ["{1}C.{2}O"], mode=mode)["EM"] == 100.0
    r = _ev(["{2}O..{1}C."], ["{1}C.{2}O"], mode=mode)
    assert r["EM"] == 100.0 and r["VAL"] == 0.0


# --------------------------------------------------------------------------- located errors
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bad", ["{x}O", "{0}O", "{-1}O", "{2O", "O{2}", "{}O", "{2}O{1}C", "{1.5}O"])
def test_broken_prediction_coefficient_is_an_error(mode: str, bad: str) -> None:
    with pytest.raises(InputError) as info:
        _ev(["{1}O", f"{{1}}C.{bad}"], ["{1}O", "{1}C"], mode=mode, pred_path="p.txt")
    assert info.value.path == "p.txt" and info.value.line == 2
    assert str(info.value).startswith("p.txt:2: ")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bad", ["{1}C1CC", "", "{1}O.C", "{x}O", "{1}O..{1}C", "{1} O"])
def test_target_must_be_valid(mode: str, bad: str) -> None:
    with pytest.raises(InputError) as info:
        _ev(["{1}O", "{1}O", "{1}O"], ["{1}O", "{1}O", bad], mode=mode, tgt_path="t.txt")
    assert info.value.path == "t.txt" and info.value.line == 3


def test_target_formula_must_parse() -> None:
    with pytest.raises(InputError) as info:
        _ev(["{1}H2O"], ["{1}Xq"], "formula", "paper", tgt_path="t.txt")
    assert info.value.line == 1 and info.value.term == "{1}Xq"


def test_line_count_mismatch_names_both_files() -> None:
    with pytest.raises(InputError) as info:
        _ev(["{1}O"] * 3, ["{1}O"] * 2, pred_path="p.txt", tgt_path="t.txt")
    msg = str(info.value)
    assert "p.txt" in msg and "t.txt" in msg and "3" in msg and "2" in msg


def test_unknown_mode_or_repr() -> None:
    with pytest.raises(InputError):
        _ev(["{1}O"], ["{1}O"], mode="lenient")
    with pytest.raises(InputError):
        _ev(["{1}O"], ["{1}O"], repr="inchi")


def test_score_lines_checks_options_eagerly() -> None:
    with pytest.raises(InputError):
        score_lines(["{1}O"], ["{1}O", "{1}O"], "smiles")


# --------------------------------------------------------------------------- rates
def test_balance_rates_partition_valid_predictions() -> None:
    src = ["{1}CH4.{2}O2"] * 6
    tgt = ["{1}CO2.{2}H2O"] * 6
    pred = [
        "{1}CO2.{2}H2O",  # BAL
        "{1}CO2.{1}H2O",  # DEF (one O and two H short)
        "{1}CO2.{3}H2O",  # EXC
        "{1}CO.{3}H2O",  # C O4 H6 vs C H4 O4: H in excess only -> EXC
        "{1}CO2.{2}H2O.{1}Na+",  # EXC (Na)
        "{1}CO2.{2}H2Q",  # invalid: in none of them
    ]
    r = _ev(pred, tgt, "formula", "strict", src_lines=src)
    assert r["VAL"] == pytest.approx(100 * 5 / 6)
    assert r["BAL"] == pytest.approx(100 / 6)
    assert r["DEF"] == pytest.approx(100 / 6)
    assert r["EXC"] == pytest.approx(300 / 6)
    total = sum(r[k] for k in ("BAL", "DEF", "EXC", "D+E", "CHG"))
    assert total == pytest.approx(r["VAL"])


def test_balance_class_cases() -> None:
    from collections import Counter

    src = Counter({"C": 1, "H": 4, "O": 4})
    assert balance_class(Counter({"C": 1, "H": 4, "O": 4}), src) == "BAL"
    assert balance_class(Counter({"C": 1, "H": 2, "O": 4}), src) == "DEF"
    assert balance_class(Counter({"C": 1, "H": 4, "O": 4, "N": 1}), src) == "EXC"
    assert balance_class(Counter({"C": 1, "H": 6, "O": 3}), src) == "D+E"
    assert balance_class(Counter({"C": 1, "H": 4, "O": 4, "charge": -1}), src) == "CHG"


def test_smiles_balance_uses_explicit_hydrogens() -> None:
    r = _ev(["{1}CO", "{1}C"], ["{1}CO", "{1}CO"], "smiles", "strict", src_lines=["{1}C.{1}O"] * 2)
    # CH4 + H2O = C H6 O; CH3OH = C H4 O -> DEF; CH4 alone -> DEF too (O missing)
    assert r["BAL"] == 0.0 and r["DEF"] == 100.0


def test_rates_absent_without_source_and_source_errors_located() -> None:
    r = _ev(["{1}O"], ["{1}O"])
    assert "BAL" not in r and "VAL" in r
    with pytest.raises(InputError) as info:
        _ev(["{1}O"] * 2, ["{1}O"] * 2, src_lines=["{1}O", "{1}C1CC"], src_path="s.txt")
    assert info.value.path == "s.txt" and info.value.line == 2
    with pytest.raises(InputError):
        _ev(["{1}O"] * 2, ["{1}O"] * 2, src_lines=["{1}O"], src_path="s.txt")


# --------------------------------------------------------------------------- beam / top-k
def test_beam_topk() -> None:
    tgt = ["{1}O", "{1}C", "{1}N"]
    pred = [
        "{1}C", "{1}O", "{2}O",  # exact at rank 2
        "{1}C", "{1}N", "{1}N",  # exact at rank 1
        "{1}O", "{1}C", "{2}N",  # never exact
    ]  # fmt: skip
    r = _ev(pred, tgt, beam=3)
    assert r["n"] == 3 and r["beam"] == 3
    assert r["EM"] == pytest.approx(100 / 3)
    assert r["topk"] == pytest.approx({"1": 100 / 3, "3": 200 / 3})
    r5 = _ev(pred, tgt, beam=3, topk=[1, 2, 5])
    assert r5["topk"] == pytest.approx({"1": 100 / 3, "2": 200 / 3, "3": 200 / 3})


def test_beam_error_line_numbers_are_file_lines() -> None:
    pred = ["{1}O", "{1}O", "{1}O", "{1}O", "{x}O", "{1}O"]
    with pytest.raises(InputError) as info:
        _ev(pred, ["{1}O"] * 3, beam=2, pred_path="beam.txt")
    assert info.value.line == 5


def test_beam_line_count_must_be_a_multiple() -> None:
    with pytest.raises(InputError, match="expected 6"):
        _ev(["{1}O"] * 5, ["{1}O"] * 3, beam=2)


def test_parse_prediction_validity() -> None:
    assert parse_prediction("{1}O.{2}C", "smiles").valid
    assert not parse_prediction("{1}O.{2}C1CC", "smiles").valid
    assert not parse_prediction("", "smiles").valid
