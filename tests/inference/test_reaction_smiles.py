"""Reaction lines in predict: reagents between the arrows are never consumed, given products are completed with
by-products and the smallest balancing coefficients, and lines that cannot be balanced say why."""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from gnn_chemalgebra.chem.bagfile import parse_reaction_input
from gnn_chemalgebra.chem.molecule import bag_composition
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.data.dataset import ExtraVocab, example_from_terms
from gnn_chemalgebra.data.featurize import Featurizer
from gnn_chemalgebra.inference.predictor import Predictor

TINY = {"hidden": 16, "layers": 1, "heads": 2, "dropout": 0.0}


def _record(pred: Predictor, line: str, beam: int = 1) -> dict:
    inp = parse_reaction_input(line)
    assert inp.repr == pred.repr
    (rec,) = pred.predict([example_from_terms(inp.terms, vtype=1)], beam=beam)
    return rec.to_json()


@pytest.mark.unit
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(
    ("repr", "line", "reagents"),
    [
        ("formula", "C2H3ClO>C7H9N>", ["C7H9N"]),
        ("formula", "C2H3ClO.C7H9N>H2O.C6H15N>", ["H2O", "C6H15N"]),  # water would be a by-product: still kept
        ("smiles", "CC(=O)Cl>NCc1ccccc1>", ["NCc1ccccc1"]),
    ],
)
def test_reagents_between_the_arrows_are_written_unchanged(
    repr: str, line: str, reagents: list[str], seed: int
) -> None:
    """Whatever an untrained network's heads say, no hypothesis the decoder writes changes a reagent."""
    torch.manual_seed(seed)
    pred = Predictor.build(TINY, Featurizer(repr), ExtraVocab(["HCl", "H2O"] if repr == "formula" else ["Cl"]), 1)
    rec = _record(pred, line, beam=3)
    terms = rec["prediction"].split(".")
    for m in reagents:
        assert f"{{1}}{m}" in terms and m not in rec["nu"]
    roles = {m["mol"]: m["role"] for m in rec["molecules"]}
    assert all(roles[m] == "reagent" for m in reagents)
    assert all(m["role"] != "product" for m in rec["molecules"])  # a reactant is never made either
    assert rec["given_roles"] is True and rec["given_products"] == [] and rec["equation"] is None
    for b in rec["beam"]:
        assert all(f"{{1}}{m}" in b["prediction"].split(".") for m in reagents)


@pytest.mark.unit
def test_a_bag_keeps_the_model_free_to_choose_roles() -> None:
    pred = Predictor.build(TINY, Featurizer("formula"), ExtraVocab(["HCl"]), 1)
    rec = _record(pred, "{1}C2H3ClO.{1}C7H9N")
    assert rec["given_roles"] is False and rec["given_products"] == [] and rec["equation"] is None


@pytest.mark.unit
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(
    ("line", "prediction", "equation"),
    [
        ("C2H3ClO.C6H7NO>>C8H9NO2", "{1}C8H9NO2.{1}HCl", "C2H3ClO + C6H7NO -> C8H9NO2 + HCl"),
        ("C2H3ClO.C6H7NO>C6H15N>C8H9NO2", "{1}C6H15N.{1}C8H9NO2.{1}HCl", "C2H3ClO + C6H7NO -> C8H9NO2 + HCl"),
        ("C2H4.H2>>C2H6", "{1}C2H6", "C2H4 + H2 -> C2H6"),  # balances with no by-product
        ("C2H6>>C4H10", "{1}C4H10.{1}H2", "2 C2H6 -> C4H10 + H2"),  # the covering leaves H2
        ("H2.O2>>H2O", "{2}H2O", "2 H2 + O2 -> 2 H2O"),
    ],
)
def test_given_products_are_completed_with_balancing_coefficients(
    line: str, prediction: str, equation: str, seed: int
) -> None:
    """Formula model, untrained: the completion is exact algebra, so any weights give the same answer where one
    by-product set balances."""
    torch.manual_seed(seed)
    pred = Predictor.build(TINY, Featurizer("formula"), ExtraVocab(["HCl", "H2O", "H2"]), 1)
    rec = _record(pred, line)
    assert rec["prediction"] == prediction and rec["equation"] == equation
    assert rec["balanced"] and not rec["fallback"] and not rec["not_covered"]
    assert rec["given_roles"] is True and rec["given_products"] == [parse_reaction_input(line).sides.products[0]]
    assert rec["extent"] == 1 and rec["main_product"] == rec["given_products"][0]
    left, right = equation.split(" -> ")
    assert bag_composition(_bag(left), "formula") == bag_composition(_bag(right), "formula")
    # the record's source is the amounts the line is balanced from: prediction = source + nu, as for any line
    assert bag_composition(rec["source"], "formula") == bag_composition(rec["prediction"], "formula")


def _bag(side: str) -> str:
    terms = []
    for part in side.split(" + "):
        k, _, m = part.rpartition(" ")
        terms.append(f"{{{k or 1}}}{m}")
    return ".".join(terms)


@pytest.mark.unit
def test_given_products_in_smiles_without_an_edit_model() -> None:
    """The SMILES decoder needs no product graph when the products are given: the ester is written, not the amide
    a model would predict, with HCl from the vocabulary."""
    pred = Predictor.build(TINY, Featurizer("smiles"), ExtraVocab(["Cl", "O"]), 1)
    assert pred.edit is None
    rec = _record(pred, "CC(=O)Cl.Nc1ccc(O)cc1>>CC(=O)Oc1ccc(N)cc1")
    assert rec["prediction"] == "{1}CC(=O)Oc1ccc(N)cc1.{1}Cl" and not rec["fallback"]
    assert rec["equation"] == "CC(=O)Cl + Nc1ccc(O)cc1 -> CC(=O)Oc1ccc(N)cc1 + Cl"
    assert rec["nu"] == {"CC(=O)Cl": -1, "Nc1ccc(O)cc1": -1} and set(rec["by_products"]) == {"Cl"}


@pytest.mark.unit
def test_a_by_product_outside_the_vocabulary_is_the_leftover_chain() -> None:
    pred = Predictor.build(TINY, Featurizer("smiles"), ExtraVocab([]), 1)
    rec = _record(pred, "CC>>CCCC")
    assert rec["prediction"] == "{1}CCCC.{1}[H][H]" and rec["equation"] == "2 CC -> CCCC + [H][H]"
    assert rec["source"] == "{2}CC"  # a reaction SMILES names species: the amounts are the equation's
    assert rec["by_products"] == {"[H][H]": None}


@pytest.mark.unit
def test_no_by_product_that_closes_the_balance_is_a_fallback_naming_the_elements(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pred = Predictor.build(TINY, Featurizer("smiles"), ExtraVocab([]), 1)
    monkeypatch.setattr(pred.decoder, "byproduct_options", lambda *a: [()])  # nothing closes it
    rec = _record(pred, "CC>>CCCC")
    assert rec["fallback"] and rec["prediction"] == "{1}CC" and rec["equation"] is None
    assert rec["not_covered"] == [
        "cannot be balanced: H does not balance (2 CC -> CCCC leaves H2); no by-product closes it"
    ]


def _predict(lines: str, *args: str) -> tuple[int, list[dict], str]:
    res = CliRunner().invoke(app, ["predict", "-", "--json", *args], input=lines)
    return res.exit_code, [json.loads(x) for x in res.stdout.splitlines() if x.strip()], res.output


@pytest.fixture
def _bundled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GNNCA_CHECKPOINT", raising=False)
    monkeypatch.delenv("GNNCA_EDIT_CHECKPOINT", raising=False)


@pytest.mark.integration
@pytest.mark.usefixtures("_bundled")
def test_bundled_smiles_model_keeps_reagents_and_given_products() -> None:
    code, recs, out = _predict("CC(=O)Cl>NCc1ccccc1>\nCC(=O)Cl.Nc1ccc(O)cc1>>CC(=O)Oc1ccc(N)cc1\n")
    assert code == 0, out
    reagent, ester = recs
    assert "{1}NCc1ccccc1" in reagent["prediction"].split(".") and "NCc1ccccc1" not in reagent["nu"]
    assert {m["mol"]: m["role"] for m in reagent["molecules"]}["NCc1ccccc1"] == "reagent"
    assert ester["prediction"] == "{1}CC(=O)Oc1ccc(N)cc1.{1}Cl" and ester["given_roles"] is True
    assert ester["given_products"] == ["CC(=O)Oc1ccc(N)cc1"] and ester["main_product"] == "CC(=O)Oc1ccc(N)cc1"
    assert ester["equation"] == "CC(=O)Cl + Nc1ccc(O)cc1 -> CC(=O)Oc1ccc(N)cc1 + Cl"
    assert ester["source"] == "{1}CC(=O)Cl.{1}Nc1ccc(O)cc1" and ester["line"] == 2


@pytest.mark.integration
@pytest.mark.usefixtures("_bundled")
def test_bundled_formula_model_completes_formula_reaction_lines() -> None:
    code, recs, out = _predict("C2H3ClO.C6H7NO>C6H15N>C8H9NO2\nC2H3ClO>C7H9N>\n")
    assert code == 0, out
    ester, reagent = recs
    assert ester["prediction"] == "{1}C6H15N.{1}C8H9NO2.{1}HCl" and ester["equation"].endswith("C8H9NO2 + HCl")
    assert "{1}C7H9N" in reagent["prediction"].split(".") and "C7H9N" not in reagent["nu"]


@pytest.mark.integration
@pytest.mark.usefixtures("_bundled")
def test_a_line_that_cannot_be_balanced_is_refused_with_its_reason() -> None:
    code, _, out = _predict("CC(=O)Cl>Nc1ccc(O)cc1>CC(=O)Oc1ccc(N)cc1\n")
    assert code == 2
    assert "<stdin>:1: cannot be balanced: the products hold N, which no reactant supplies" in out
    assert "Traceback" not in out and len(out.strip().splitlines()) == 1
