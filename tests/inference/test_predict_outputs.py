"""Honest predict outputs with the bundled models: inputs never misread, the chosen hypothesis'
roles, fallbacks marked and counted, the extent rule, decode settings (the Python API: tests/test_api.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from gnn_chemalgebra.algebra.roles import role_name
from gnn_chemalgebra.chem.molecule import bag_composition
from gnn_chemalgebra.config import DecodeConfig, decode_overrides
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.inference.prediction import Prediction
from gnn_chemalgebra.inference.predictor import Predictor, PredictorOptions
from gnn_chemalgebra.inference.report import count_fallbacks
from gnn_chemalgebra.inference.run import DEFAULT_CHECKPOINT

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


def test_bad_smiles_line_is_refused_in_place_and_the_rest_predicted() -> None:
    """``printf 'C1CC\\nCCO.CC(=O)O\\n' | gnnca predict - --skip-invalid``: 'C1CC' is a broken ring, not the
    formula C3; its output line is empty, the next line is predicted as SMILES."""
    res = _predict(["--skip-invalid"], "C1CC\nCCO.CC(=O)O\n")
    assert res.exit_code == 0, res.output
    empty, line = res.stdout.splitlines()
    assert empty == "" and "C4H10O3" not in line  # read as SMILES by the SMILES model: SMILES that balances
    assert bag_composition(line, "smiles") == bag_composition("CCO.CC(=O)O", "smiles")
    assert "<stdin>:1: neither SMILES" in res.stderr and "skipped 1 of 2 line(s)" in res.stderr
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
    # a golden Type-2 line that the bundled formula model cannot balance (its golden output is the source)
    line = (GOLDEN / "formula_t2.in").read_text().splitlines()[95]
    assert (GOLDEN / "formula_t2.out").read_text().splitlines()[95] == line
    res = _predict(["--json", "--extent", "bayes"], line + "\n")
    assert res.exit_code == 0, res.output
    (rec,) = [json.loads(x) for x in res.stdout.splitlines()]
    assert rec["fallback"] is True and rec["prediction"] == rec["source"]
    assert rec["raw_confidence"] == 0.0 and 0.0 <= rec["confidence"] <= 1.0  # a number, never null
    assert all(m["nu"] == 0 for m in rec["molecules"]) and rec["not_covered"]
    fell = Prediction.of_line(rec["prediction"])
    fell.fallback = True
    assert count_fallbacks([fell, Prediction.of_line(rec["prediction"])]) == 1
    assert "1 of 1 line(s) fell back" in res.stderr
    assert f"gnnca: fallback: <stdin>:1: {rec['not_covered'][0]}; the source is written unchanged" in res.stderr
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
    res = _predict([], AMOUNTS + "\n")
    assert res.exit_code == 0 and "read as amounts" in res.stderr and "--extent bayes" in res.stderr
    assert "read as amounts" not in _predict([], "{3}CC(=O)Cl.{3}NCc1ccccc1\n").stderr  # equal: the rules agree
    auto = rec([], AMOUNTS)  # free input (stdin): a chemist's amounts, the limiting reactant is consumed
    assert (auto["extent_rule"], auto["extent"]) == ("limiting", 2) and auto["prediction"] == lim["prediction"]
    assert rec(["--extent", "bayes"], AMOUNTS)["extent"] == 1  # the benchmark's rule reads it as a Type-2 line
    big = rec([], "{20}CC(=O)Cl.{35}NCc1ccccc1.{20}CCN(CC)CC")
    assert (big["extent_rule"], big["extent"]) == ("limiting", 20)
    res = _predict(["--extent", "most"], AMOUNTS)
    assert res.exit_code == 2 and "--extent must be one of" in res.stderr


def test_auto_extent_is_bayes_for_benchmark_source_files(tmp_path: Path) -> None:
    from gnn_chemalgebra.inference.run import resolve_extent

    bench = tmp_path / "src-test_in.txt"
    bench.write_text(AMOUNTS + "\n")
    res = CliRunner().invoke(app_(), ["predict", str(bench), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["extent_rule"] == "bayes"
    assert resolve_extent("auto", str(tmp_path / "reactions.txt")) == "limiting"
    assert resolve_extent("auto", None) == "limiting" and resolve_extent("bayes", None) == "bayes"


def test_line_type_is_read_per_line() -> None:
    from gnn_chemalgebra.chem.bag import parse_bag
    from gnn_chemalgebra.inference.run import line_vtype

    equal, unequal = parse_bag("{2}CCO.{2}CC(=O)O"), parse_bag("{2}CCO.{3}CC(=O)O")
    assert (line_vtype(equal, "auto", 2), line_vtype(unequal, "auto", 1)) == (1, 2)
    assert (line_vtype(equal, "2", 1), line_vtype(unequal, "1", 2), line_vtype(unequal, "model", 1)) == (2, 1, 1)
    with pytest.raises(InputError, match="--line-type must be"):
        line_vtype(equal, "3", 1)
    recs = [
        json.loads(x) for x in _predict(["--json", "--extent", "bayes"], "CCO.CC(=O)O\n" + AMOUNTS).stdout.splitlines()
    ]
    assert [r["line_type"] for r in recs] == [1, 2]
    forced = _predict(["--json", "--extent", "bayes", "--line-type", "2"], "CCO.CC(=O)O\n").stdout
    assert json.loads(forced)["line_type"] == 2
    res = _predict(["--line-type", "3"], AMOUNTS + "\n")
    assert res.exit_code == 2 and "--line-type must be" in res.stderr


def test_decode_settings_come_from_the_checkpoint_and_set(tmp_path: Path) -> None:
    bundled = DecodeConfig(type1_model="gnn_type1_default.pt")  # the defaults, and its Type-1 model
    assert Predictor.from_checkpoint(str(DEFAULT_CHECKPOINT)).settings == bundled
    ck = torch.load(DEFAULT_CHECKPOINT, map_location="cpu", weights_only=True)
    ck.setdefault("config", {})["decode"] = {"balance_beam": 7, "evidence_floor": -5.0}
    torch.save(ck, tmp_path / "ck.pt")
    pred = Predictor.from_checkpoint(str(tmp_path / "ck.pt"))
    assert (pred.settings.balance_beam, pred.settings.evidence_floor, pred.settings.edit_role_sets) == (7, -5.0, 2)
    assert decode_overrides(pred.settings, ["decode.balance_beam=3"]).balance_beam == 3
    opts = PredictorOptions(extent="limiting", overrides=("decode.balance_beam=3",))
    over = Predictor.from_checkpoint(tmp_path / "ck.pt", options=opts)  # the saved section, amended
    assert (over.settings.balance_beam, over.settings.evidence_floor, over.extent) == (3, -5.0, "limiting")
    assert over.spec().load().settings == over.settings  # a worker reloads the same settings
    for bad, why in [
        ("decode.balance_bem=3", "did you mean 'decode.balance_beam'"),
        ("decode.balance_beam=many", "decode.balance_beam"),
        ("train.lr=0.1", "decode.* settings only"),
    ]:
        with pytest.raises(InputError, match=why):
            decode_overrides(pred.settings, [bad])
    res = _predict(["--set", "decode.balance_beam=8", "--repr", "formula", "--byproducts", "benchmark"],
                   "{3}C2H3ClO.{3}C7H9N.{3}C6H15N\n")  # fmt: skip
    assert res.exit_code == 0 and "{3}C9H11NO" in res.stdout.split("\n")[0].split(".")
    res = _predict(["--set", "decode.balance_bem=8"], AMOUNTS + "\n")
    assert res.exit_code == 2 and "did you mean" in res.stderr


def test_workers_and_batch_size_leave_every_prediction_unchanged() -> None:
    case = GOLDEN / "formula_t2.in"
    args = ["predict", str(case), "--extent", "bayes", "--workers", "2", "--batch-size", "100"]
    res = CliRunner().invoke(app_(), args)
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == (GOLDEN / "formula_t2.out").read_text().splitlines()


@pytest.mark.parametrize("extent", ["limiting", "bayes"])
def test_coefficients_in_the_billions_with_the_limit_lifted_are_answered_in_place(extent: str) -> None:
    """``--max-coef 0``: a line of 10^9 acetyl chloride is balanced like any other (the extent search is a range,
    not a list of a billion extents), the lines around it too; ``--json`` writes the range by its ends."""
    lines = ["{1}CC(=O)Cl.{1}NCc1ccccc1", "{1000000000}CC(=O)Cl.{999999999}NCc1ccccc1", "{1}CCO.{1}CC(=O)Cl"]
    res = _predict(["--max-coef", "0", "--extent", extent, "--json"], "\n".join(lines) + "\n")
    assert res.exit_code == 0, res.output
    recs = [json.loads(x) for x in res.stdout.splitlines()]
    assert [r["line"] for r in recs] == [1, 2, 3] and all(r["balanced"] for r in recs)
    big = recs[1]
    assert bag_composition(big["prediction"], "smiles") == bag_composition(lines[1], "smiles")
    assert big["extent_candidates_range"] is True and big["extent_candidates"][0] == 1
    assert big["extent"] == (999999999 if extent == "limiting" else 1)
    assert "extent_candidates_range" not in recs[0]
