"""Honest predict outputs with the bundled models (issue 12.3-12.6): inputs never misread, the chosen hypothesis'
roles, fallbacks marked and counted, the extent rule, decode settings, and the Python API."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from gnn_chemalgebra import load_predictor
from gnn_chemalgebra.algebra.roles import role_name
from gnn_chemalgebra.api import MoleculeRole, Prediction
from gnn_chemalgebra.config import DecodeConfig
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.inference.predictor import Predictor
from gnn_chemalgebra.inference.report import count_fallbacks
from gnn_chemalgebra.inference.run import DEFAULT_CHECKPOINT, decode_overrides

pytestmark = pytest.mark.integration

GOLDEN = Path(__file__).parent / "golden"
AMOUNTS = "{2}CC(=O)Cl.{3}NCc1ccccc1"  # acetyl chloride is limiting: 2 of it react


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GNNCA_CHECKPOINT", raising=False)
    monkeypatch.delenv("GNNCA_EDIT_CHECKPOINT", raising=False)


def _predict(args: list[str], stdin: str):  # noqa: ANN202 - click's Result
    return CliRunner().invoke(app_(), ["predict", "-", *args], input=stdin)


def app_():  # noqa: ANN201 - imported late: the CLI module pulls in every command
    from gnn_chemalgebra.cli import app

    return app


def test_bad_smiles_line_does_not_turn_the_input_into_formulas() -> None:
    """Issue 12 regression: ``printf 'C1CC\\nCCO.CC(=O)O\\n' | gnnca predict - --skip-invalid``."""
    res = _predict(["--skip-invalid"], "C1CC\nCCO.CC(=O)O\n")
    assert res.exit_code == 0, res.output
    (line,) = res.stdout.splitlines()
    assert "C4H10O3" not in line and "CC(=O)O" in line  # read as SMILES by the SMILES model
    assert "<stdin>:1: not SMILES" in res.stderr and "skipped 1 invalid line" in res.stderr
    res = _predict([], "C1CC\nCCO.CC(=O)O\n")
    assert res.exit_code == 2 and res.stderr.startswith("gnnca: error: <stdin>:1: ") and "Traceback" not in res.output


def test_json_roles_are_those_of_the_chosen_hypothesis() -> None:
    res = _predict(["--json"], "{2}CC(=O)Cl.{3}NCc1ccccc1.{2}CCN(CC)CC\n{3}C2H3ClO.{3}C7H9N\n")
    assert res.exit_code == 2  # a formula line in a SMILES input is refused, naming it
    assert "<stdin>:2:" in res.stderr and "mixed representations" in res.stderr
    res = _predict(["--json"], "{2}CC(=O)Cl.{3}NCc1ccccc1.{2}CCN(CC)CC\nCC(=O)Cl.NCc1ccccc1>CCN(CC)CC>\n")
    assert res.exit_code == 0, res.output
    for rec in map(json.loads, res.stdout.splitlines()):
        assert rec["fallback"] is False and 0 < rec["confidence"] <= 1
        for m in rec["molecules"]:
            assert m["nu"] == rec["nu"].get(m["mol"], 0) and m["role"] == role_name(m["nu"])
            assert m["best_role"] in ("reactant", "reagent", "product") and 0 <= m["best_confidence"] <= 1
        assert {m["role"] for m in rec["molecules"]} >= {"reactant"}
        # the leftover reported is the one written (not the head's own top candidate, which is best_leftover)
        assert rec["leftover"] is None or rec["leftover"] in rec["new_products"] or rec["nu"].get(rec["leftover"])


def test_a_line_without_balanced_hypothesis_is_marked_and_counted() -> None:
    line = (GOLDEN / "smiles_t2.in").read_text().splitlines()[50]  # the one golden line that falls back
    res = _predict(["--json"], line + "\n")
    assert res.exit_code == 0, res.output
    (rec,) = [json.loads(x) for x in res.stdout.splitlines()]
    assert rec["fallback"] is True and rec["prediction"] == rec["source"] and rec["confidence"] is None
    assert all(m["nu"] == 0 for m in rec["molecules"]) and rec["not_covered"]
    assert count_fallbacks([rec, {"fallback": False}]) == 1
    assert "1 of 1 line(s) fell back" in res.stderr
    res = _predict([], AMOUNTS + "\n")
    assert "fell back" not in res.stderr


def test_extent_rule_limiting_bayes_and_auto() -> None:
    def rec(args: list[str], line: str) -> dict:
        res = _predict(["--json", *args], line + "\n")
        assert res.exit_code == 0, res.output
        return json.loads(res.stdout)

    lim = rec(["--extent", "limiting"], AMOUNTS)
    assert (lim["extent"], lim["extent_rule"]) == (2, "limiting")
    assert "{2}CC(=O)NCc1ccccc1" in lim["prediction"].split(".") and "{1}NCc1ccccc1" in lim["prediction"]
    auto = rec([], AMOUNTS)  # coefficients within the benchmark's sets: read as a benchmark line
    assert auto["extent_rule"] == "bayes" and auto["extent"] == rec(["--extent", "bayes"], AMOUNTS)["extent"] == 1
    big = rec([], "{20}CC(=O)Cl.{35}NCc1ccccc1.{20}CCN(CC)CC")  # amounts beyond 1..10: a chemist's amounts
    assert (big["extent_rule"], big["extent"]) == ("limiting", 20)
    res = _predict(["--extent", "most"], AMOUNTS)
    assert res.exit_code == 2 and "--extent must be one of" in res.stderr


def test_decode_settings_come_from_the_checkpoint_and_set(tmp_path: Path) -> None:
    assert Predictor.from_checkpoint(str(DEFAULT_CHECKPOINT)).settings == DecodeConfig()  # no section: defaults
    ck = torch.load(DEFAULT_CHECKPOINT, map_location="cpu", weights_only=True)
    ck.setdefault("config", {})["decode"] = {"balance_beam": 7, "evidence_floor": -5.0}
    torch.save(ck, tmp_path / "ck.pt")
    pred = Predictor.from_checkpoint(str(tmp_path / "ck.pt"))
    assert (pred.balance_beam, pred.settings.evidence_floor, pred.edit_role_sets) == (7, -5.0, 2)
    assert decode_overrides(pred.settings, ["decode.balance_beam=3"]).balance_beam == 3
    for bad, why in [
        ("decode.balance_bem=3", "did you mean 'decode.balance_beam'"),
        ("decode.balance_beam=many", "decode.balance_beam"),
        ("train.lr=0.1", "decode.* settings only"),
    ]:
        with pytest.raises(InputError, match=why):
            decode_overrides(pred.settings, [bad])
    res = _predict(["--set", "decode.balance_beam=8", "--repr", "formula"], "{3}C2H3ClO.{3}C7H9N.{3}C6H15N\n")
    assert res.exit_code == 0 and "{3}C9H11NO" in res.stdout.split("\n")[0].split(".")
    res = _predict(["--set", "decode.balance_bem=8"], AMOUNTS + "\n")
    assert res.exit_code == 2 and "did you mean" in res.stderr


def test_python_api() -> None:
    predictor = load_predictor(extent="limiting")
    preds = predictor.predict(AMOUNTS + "\n# a comment\nCC(=O)Cl.NCc1ccccc1>CCN(CC)CC>")
    assert [p.line for p in preds] == [1, 3] and all(isinstance(p, Prediction) for p in preds)
    p = preds[0]
    assert p.extent == 2 and p.extent_rule == "limiting" and not p.fallback and 0 < (p.confidence or 0) <= 1
    assert p.main_product == "CC(=O)NCc1ccccc1" and p.prediction == p.record["prediction"]
    assert all(isinstance(r, MoleculeRole) for r in p.roles) and {r.role for r in p.roles} == {"reactant"}
    (f,) = predictor.predict(["{3}C2H3ClO.{3}C7H9N.{3}C6H15N"])  # formulas: the bundled formula model
    assert "{3}C9H11NO" in f.prediction.split(".")
    with pytest.raises(InputError, match="<input>:1:"):
        predictor.predict(["H2O.CCO"])  # a formula and a SMILES in one line
    with pytest.raises(InputError, match="--extent"):
        load_predictor(extent="most")
    with pytest.raises(InputError, match="did you mean 'decode.balance_beam'"):
        load_predictor(settings=["decode.balance_bem=2"])


@pytest.mark.unit
def test_package_import_stays_cheap() -> None:
    code = "import sys, gnn_chemalgebra; assert callable(gnn_chemalgebra.load_predictor); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_readme_api_example_runs_as_documented(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    block = next(b for b in readme.split("```python\n")[1:] if "load_predictor" in b).split("```")[0]
    exec(compile(block, "README.md", "exec"), {})  # noqa: S102 - the README's own example
    printed = capsys.readouterr().out.splitlines()
    documented = [ln.split("# ", 1)[1] for ln in block.splitlines() if ln.startswith("print(")]
    assert printed[:2] == documented[:2]  # the prediction line, then extent / rule / fallback / confidence
    assert printed[2].startswith(documented[2].rstrip(".]").rstrip(", "))
