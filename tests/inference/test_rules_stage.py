"""The rules stage: a user's line that a rule covers is written by the rule (marked, with the rule's confidence,
the model's line kept beside it); a line no rule covers keeps the model's line and its trust fields; benchmark
source files never go through the rules."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.chem.molecule import bag_composition
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.inference.predict_sets import RULE_NO_SET
from gnn_chemalgebra.inference.prediction import (
    Alternative,
    DomainFields,
    MoleculeRole,
    Prediction,
    TrustFields,
)
from gnn_chemalgebra.inference.rules_stage import RULE_NOTE, rule_predictions, rules_apply


def _pred(source: str, prediction: str, top: list[tuple[str, float]] | None = None, **extra: object) -> Prediction:
    p = Prediction(prediction, False, 0.42, [], None, 1, "limiting", [], **extra)  # type: ignore[arg-type]
    p.placed(1, source, "in", 1)
    top = top if top is not None else [(prediction, 0.42)]
    p.trust = TrustFields(0.5, True, None, DomainFields(False, 0.1, ["far from training"]), [], [
        Alternative(line, prob, None) for line, prob in top
    ])  # fmt: skip
    return p


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
    p = _pred("{1}Cl.{1}[Na+].{1}[OH-]", "{1}Cl.{1}[Na+].{1}[OH-]")
    p.molecules = [MoleculeRole(m, "reagent", 0, 0.9, "reagent", 0.9) for m in ("Cl", "[Na+]", "[OH-]")]
    rule_predictions([p], "smiles")
    rec = p.to_json()
    assert rec["written_by"] == "rule:neutralisation"
    assert bag_composition(rec["prediction"], "smiles") == bag_composition(rec["source"], "smiles")
    assert set(rec["prediction"].split(".")) == {"{1}[Na+]", "{1}[Cl-]", "{1}O"}
    assert rec["model_prediction"] == "{1}Cl.{1}[Na+].{1}[OH-]" and rec["model_confidence"] == 0.42
    assert rec["confidence"] == 0.95 and rec["calibrated"] is False and rec["calibration_note"] == RULE_NOTE
    assert rec["in_domain"] is True and rec["fallback"] is False
    assert rec["top_k"][0] == {"prediction": rec["prediction"], "probability": 0.95, "main_product": "[Cl-]"}
    assert "prediction_set" not in rec and p.by_rule  # the sets come after the rules (none for a rule's line)
    assert [(m["mol"], m["role"]) for m in rec["molecules"]] == [("Cl", "reactant"), ("[Na+]", "reagent"),
                                                                  ("[OH-]", "reactant")]  # fmt: skip


@pytest.mark.unit
def test_the_models_alternatives_follow_the_rules_line() -> None:
    p = _pred("{1}CCC.{5}O=O", "{4}O=O.{1}CCCOO", [("{4}O=O.{1}CCCOO", 0.42), ("{4}O=O.{1}CC(C)OO", 0.2)])
    p.fallback = True
    rule_predictions([p], "smiles")
    assert p.written_by == "rule:combustion" and p.fallback is False
    assert [line for line, _ in p.top_k] == [p.prediction, "{4}O=O.{1}CCCOO"]
    assert p.top_k[1][1] == pytest.approx(0.42 * 0.05, abs=1e-4)  # scaled to what the rule leaves


@pytest.mark.unit
def test_a_line_no_rule_covers_keeps_the_models_line() -> None:
    p = _pred("{1}CC(=O)O.{1}NCc1ccccc1", "{1}CC(=O)NCc1ccccc1.{1}O")
    before = p.to_json()
    rule_predictions([p], "smiles")
    after = p.to_json()
    assert after.pop("written_by") == "model"
    assert after == before  # the model's line and its trust fields (out of domain: still flagged)


@pytest.mark.unit
def test_a_reaction_smiles_keeps_its_reagents_and_products() -> None:
    """The reagents between the arrows are never consumed; the rule must make the products named."""
    src = "{1}Cl.{1}[OH-].{1}[Ca+2]"
    p = _pred(src, src, given_roles=True, given_products=["[Cl-]"], given_reagents=["[Ca+2]"])
    rule_predictions([p], "smiles")
    assert p.written_by == "rule:neutralisation"
    assert set(p.prediction.split(".")) == {"{1}[Ca+2]", "{1}[Cl-]", "{1}O"}
    p = _pred(src, "x", given_roles=True, given_products=["ClCl"], given_reagents=["[Ca+2]"])
    rule_predictions([p], "smiles")
    assert p.written_by == "model"
    src = "{1}Cl.{1}[OH-].{1}[Na+]"
    p = _pred(src, "x", given_roles=True, given_products=["[Cl-]"], given_reagents=["[OH-]", "[Na+]"])
    rule_predictions([p], "smiles")  # the hydroxide written as a reagent: never consumed
    assert p.written_by == "model"


@pytest.mark.integration
def test_a_rules_line_has_no_conformal_set_and_is_counted_so() -> None:
    """With ``--coverage`` a line a rule wrote gets no prediction set (its confidence is the rule's, not the
    model's that the sets are fitted on), and the count of lines without a set on stderr agrees with the
    records."""
    lines = "Cl.[Na+].[OH-]\nCC(=O)O.NCc1ccccc1\n"  # a neutralisation; an acid and an amine, no rule
    res = CliRunner().invoke(app, ["predict", "-", "--coverage", "0.9", "--json"], input=lines)
    assert res.exit_code == 0, res.output
    recs = [json.loads(x) for x in res.stdout.splitlines()]
    assert recs[0]["written_by"] == "rule:neutralisation" and recs[1]["written_by"] == "model"
    assert recs[0]["prediction_set"] is None and recs[0]["set_size"] is None
    assert recs[0]["conformal_note"] == RULE_NO_SET
    counted = [int(n) for n in re.findall(r"gnnca: (\d+) line\(s\) have no prediction set", res.stderr)]
    assert sum(counted) == sum(r["prediction_set"] is None for r in recs)
    assert f"gnnca: 1 line(s) have no prediction set (NA in text output, null in --json): {RULE_NO_SET}" in res.stderr
    text = CliRunner().invoke(app, ["predict", "-", "--coverage", "0.9"], input=lines)
    assert text.exit_code == 0, text.output
    assert text.stdout.splitlines()[0] == "NA"


@pytest.mark.integration
def test_predict_marks_who_wrote_each_line_and_leaves_benchmark_files_alone(tmp_path: Path) -> None:
    lines = "Cl.[Na+].[OH-]\nCC(=O)O.NCc1ccccc1\n"  # a neutralisation; an acid and an amine, no rule
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
