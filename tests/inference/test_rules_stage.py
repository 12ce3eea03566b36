"""The rules stage: a user's line that a rule covers is written by the rule (marked, with the rule's confidence,
the model's line kept beside it); a line no rule covers keeps the model's line and its trust fields; benchmark
source files never go through the rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.chem.molecule import bag_composition
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.inference.rules_stage import RULE_NOTE, rule_records, rules_apply


def _record(source: str, prediction: str, **extra: object) -> dict:
    return {
        "line": 1,
        "source": source,
        "prediction": prediction,
        "fallback": False,
        "confidence": 0.42,
        "calibrated": True,
        "in_domain": False,
        "domain_notes": ["far from training"],
        "molecules": [],
        "top_k": [{"prediction": prediction, "probability": 0.42, "main_product": None}],
        **extra,
    }


@pytest.mark.unit
@pytest.mark.parametrize(
    ("convention", "path", "expected"),
    [
        ("chemist", None, True),  # stdin, the API
        ("chemist", "my_reactions.txt", True),
        ("benchmark", None, False),  # --byproducts benchmark or --extent bayes
        ("chemist", "built/full/ChemAlgebra_F_T1_x1/src-test_in.txt", False),  # a benchmark file, whatever is asked
    ],
)
def test_only_a_users_lines_go_through_the_rules(convention: str, path: str | None, expected: bool) -> None:
    assert rules_apply(convention, path) is expected


@pytest.mark.unit
def test_a_rule_writes_the_line_and_says_so() -> None:
    rec = _record("{1}Cl.{1}[Na+].{1}[OH-]", "{1}Cl.{1}[Na+].{1}[OH-]", prediction_set=None, conformal_note="x")
    rule_records([rec], "smiles")
    assert rec["written_by"] == "rule:neutralisation"
    assert bag_composition(rec["prediction"], "smiles") == bag_composition(rec["source"], "smiles")
    assert set(rec["prediction"].split(".")) == {"{1}[Na+]", "{1}[Cl-]", "{1}O"}
    assert rec["model_prediction"] == "{1}Cl.{1}[Na+].{1}[OH-]" and rec["model_confidence"] == 0.42
    assert rec["confidence"] == 0.95 and rec["calibrated"] is False and rec["calibration_note"] == RULE_NOTE
    assert rec["in_domain"] is True and rec["fallback"] is False
    assert rec["top_k"][0] == {"prediction": rec["prediction"], "probability": 0.95, "main_product": "[Cl-]"}
    assert rec["prediction_set"] == [{"prediction": rec["prediction"], "probability": 0.95}] and rec["set_size"] == 1
    assert "conformal_note" not in rec


@pytest.mark.unit
def test_the_models_alternatives_follow_the_rules_line() -> None:
    rec = _record("{1}CCC.{5}O=O", "{4}O=O.{1}CCCOO", fallback=True)
    rec["top_k"].append({"prediction": "{4}O=O.{1}CC(C)OO", "probability": 0.2, "main_product": "CC(C)OO"})
    rule_records([rec], "smiles")
    assert rec["written_by"] == "rule:combustion" and rec["fallback"] is False
    assert [t["prediction"] for t in rec["top_k"]] == [rec["prediction"], "{4}O=O.{1}CCCOO"]
    assert rec["top_k"][1]["probability"] == pytest.approx(0.42 * 0.05, abs=1e-4)  # scaled to what the rule leaves


@pytest.mark.unit
def test_a_line_no_rule_covers_keeps_the_models_line() -> None:
    rec = _record("{1}CC(=O)O.{1}NCc1ccccc1", "{1}CC(=O)NCc1ccccc1.{1}O")
    before = dict(rec)
    rule_records([rec], "smiles")
    assert rec.pop("written_by") == "model"
    assert rec == before  # the model's line and its trust fields (out of domain: still flagged)


@pytest.mark.unit
def test_a_reaction_smiles_keeps_its_reagents_and_products() -> None:
    """The reagents between the arrows are never consumed; the rule must make the products named."""
    mols = [
        {"mol": "Cl", "role": "reactant"},
        {"mol": "[OH-]", "role": "reactant"},
        {"mol": "[Ca+2]", "role": "reagent"},
    ]
    rec = _record("{1}Cl.{1}[OH-].{1}[Ca+2]", "{1}Cl.{1}[OH-].{1}[Ca+2]", given_roles=True, molecules=mols)
    rec["given_products"], rec["given_reagents"] = ["[Cl-]"], ["[Ca+2]"]
    rule_records([rec], "smiles")
    assert rec["written_by"] == "rule:neutralisation"
    assert set(rec["prediction"].split(".")) == {"{1}[Ca+2]", "{1}[Cl-]", "{1}O"}
    assert [m["role"] for m in mols] == ["reactant", "reactant", "reagent"]
    rec = _record("{1}Cl.{1}[OH-].{1}[Ca+2]", "x", given_roles=True, molecules=mols, given_products=["ClCl"])
    rule_records([rec], "smiles")
    assert rec["written_by"] == "model"
    rec = _record("{1}Cl.{1}[OH-].{1}[Na+]", "x", given_roles=True, given_products=["[Cl-]"])
    rec["given_reagents"] = ["[OH-]", "[Na+]"]  # the hydroxide written as a reagent: never consumed
    rule_records([rec], "smiles")
    assert rec["written_by"] == "model"


@pytest.mark.integration
def test_a_reaction_line_the_model_cannot_balance_is_written_by_the_rule() -> None:
    """The model's line falls back (its roles then say nothing of the sides); the rule reads the sides."""
    result = CliRunner().invoke(app, ["predict", "-", "--json"], input="[Fe].O=S(=O)(O)O>>[Fe+2]\n")
    assert result.exit_code == 0, result.output
    rec = json.loads(result.stdout.splitlines()[0])
    assert rec["written_by"] == "rule:metal_acid" and rec["fallback"] is False
    assert set(rec["prediction"].split(".")) == {"{1}[Fe+2]", "{1}O=S(=O)([O-])[O-]", "{1}[H][H]"}
    assert "fell back" not in result.stderr


@pytest.mark.integration
def test_predict_marks_who_wrote_each_line_and_leaves_benchmark_files_alone(tmp_path: Path) -> None:
    lines = "Cl.[Na+].[OH-]\nCCCCCBr.[Na+].[N-]=[N+]=[N-]\n"
    result = CliRunner().invoke(app, ["predict", "-", "--json"], input=lines)
    assert result.exit_code == 0, result.output
    records = [json.loads(x) for x in result.stdout.splitlines()]
    assert records[0]["written_by"] == "rule:neutralisation" and records[0]["confidence"] == 0.95
    assert records[1]["written_by"] == "model"
    src = tmp_path / "src-test_in.txt"
    src.write_text("{1}Cl.{1}[Na+].{1}[OH-]\n")
    bench = CliRunner().invoke(app, ["predict", str(src), "--json", "--byproducts", "chemist"])
    assert bench.exit_code == 0, bench.output
    assert "written_by" not in json.loads(bench.stdout.splitlines()[0])
