"""`gnnca predict` on a fresh install: the bundled checkpoints answer formula and SMILES input, no training."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.chem.molecule import bag_composition
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.inference.edit_decode import BUNDLED_CHECKPOINT as EDIT_CHECKPOINT
from gnn_chemalgebra.inference.run import (
    CHEMIST_FORMULA_CHECKPOINT,
    CHEMIST_SMILES_CHECKPOINT,
    DEFAULT_CHECKPOINT,
    SMILES_CHECKPOINT,
    default_checkpoint,
)

pytestmark = pytest.mark.integration

AMIDE = "{2}CC(=O)Cl.{2}NCc1ccccc1.{2}CCN(CC)CC"  # acetyl chloride + benzylamine, triethylamine as base


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GNNCA_CHECKPOINT", raising=False)
    monkeypatch.delenv("GNNCA_EDIT_CHECKPOINT", raising=False)


def test_bundled_files_are_package_data() -> None:
    chemist_edit = CHEMIST_SMILES_CHECKPOINT.with_name("edit_chemist.pt")
    for p in (DEFAULT_CHECKPOINT, SMILES_CHECKPOINT, EDIT_CHECKPOINT, CHEMIST_SMILES_CHECKPOINT, chemist_edit,
              CHEMIST_FORMULA_CHECKPOINT):  # fmt: skip
        assert p.is_file() and p.stat().st_size < 20e6, p
    assert default_checkpoint("formula", "chemist") == CHEMIST_FORMULA_CHECKPOINT
    assert default_checkpoint("smiles") == SMILES_CHECKPOINT and default_checkpoint("formula") == DEFAULT_CHECKPOINT
    assert default_checkpoint("smiles", "chemist") == CHEMIST_SMILES_CHECKPOINT  # a user's lines


def test_smiles_input_gets_product_graphs() -> None:
    """The benchmark's SMILES model on a user's lines (named: by default they go to the chemist's model)."""
    res = CliRunner().invoke(
        app,
        ["predict", "-", "--json", "--beam", "3", "--checkpoint", str(SMILES_CHECKPOINT)],
        input=AMIDE + "\nCCO.CC(=O)O>OS(=O)(=O)O>\n",
    )
    assert res.exit_code == 0, res.output
    recs = [json.loads(x) for x in res.stdout.splitlines()]
    assert len(recs) == 2
    amide = recs[0]
    assert amide["main_product"] == "CC(=O)NCc1ccccc1" and amide["balanced"] and not amide["not_covered"]
    assert bag_composition(amide["prediction"], "smiles") == bag_composition(AMIDE, "smiles")
    assert amide["written_by"] == "rule:acyl_substitution"  # the base takes the HCl: written as its salt
    assert {"{2}CC(=O)NCc1ccccc1", "{2}CC[NH+](CC)CC", "{2}[Cl-]"} <= set(amide["prediction"].split("."))
    model_line = amide["model_prediction"]  # the network's own line, kept beside the rule's
    assert bag_composition(model_line, "smiles") == bag_composition(AMIDE, "smiles")
    assert {"{2}CC(=O)NCc1ccccc1", "{2}Cl", "{2}CCN(CC)CC"} <= set(model_line.split("."))
    for r in recs:  # every line the model marks balanced balances, in SMILES
        assert not r["balanced"] or bag_composition(r["prediction"], "smiles") == bag_composition(r["source"], "smiles")
        assert 1 <= len(r["beam"]) <= 3


def test_formula_input_uses_the_formula_model() -> None:
    """Acetyl chloride, benzylamine and triethylamine as formulas. The benchmark's formula model writes the amide's
    formula, the exact remainder, beside HCl; the chemist's the amide beside triethylammonium chloride."""
    source = "{3}C2H3ClO.{3}C7H9N.{3}C6H15N"
    res = CliRunner().invoke(app, ["predict", "-", "--byproducts", "benchmark"], input=source + "\n")
    assert res.exit_code == 0, res.output
    line = res.stdout.strip()
    assert bag_composition(line, "formula") == bag_composition(source, "formula")
    assert "{3}C9H11NO" in line.split(".")  # the amide's formula, the exact remainder
    res = CliRunner().invoke(app, ["predict", "-", "--json"], input=source + "\n")
    assert res.exit_code == 0, res.output
    (rec,) = [json.loads(x) for x in res.stdout.splitlines()]
    assert rec["balanced"] and bag_composition(rec["prediction"], "formula") == bag_composition(source, "formula")
    assert set(rec["prediction"].split(".")) == {"{3}C9H11NO", "{3}C6H16N+", "{3}Cl-"}


def test_missing_input_file_is_a_clear_error(tmp_path) -> None:
    res = CliRunner().invoke(app, ["predict", str(tmp_path / "nope.smi")])
    assert res.exit_code == 2 and "input file not found" in res.output


def test_a_chemists_formula_line_writes_real_byproducts() -> None:
    """A Boc removal in TFA written as formulas (a user's line): the chemist's formula model takes the Boc group
    off as CO2 and isobutene and writes the free amine; a benchmark file's reading is not this model's."""
    res = CliRunner().invoke(app, ["predict", "-", "--json"], input="{2}C18H29N3O9S.{2}C2HF3O2\n")
    assert res.exit_code == 0, res.output
    (rec,) = [json.loads(x) for x in res.stdout.splitlines()]
    assert set(rec["prediction"].split(".")) == {"{2}C2HF3O2", "{2}C4H8", "{2}CO2", "{2}C13H21N3O7S"}
    assert rec["byproduct_convention"] == "chemist" and rec["balanced"]
