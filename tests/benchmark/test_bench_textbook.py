"""``gnnca bench textbook``: how a line is judged (right, within the top k, wrong and trusted, right and flagged),
and the command through the real CLI with the bundled models on a few rows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.benchmark.textbook import score_record, summarise, textbook_table
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.data.textbook import COLUMNS, DEFAULT_DIR, TextbookReaction

ROW = TextbookReaction(
    "fischer_1", "Fischer esterification", "organic", "CC(=O)O.OCC", "{1}CCOC(C)=O.{1}O", "CCOC(C)=O", "", "dev"
)
RIGHT = "{1}O.{1}O=C(OCC)C"  # the expected line in another order and another SMILES of the ester


def _rec(prediction: str, confidence: float, in_domain: bool | None = True, **more: object) -> dict:
    return {"prediction": prediction, "confidence": confidence, "in_domain": in_domain, "top_k": [], **more}


@pytest.mark.unit
@pytest.mark.parametrize(
    ("rec", "style", "counts"),
    [
        (_rec(RIGHT, 0.9), "smiles", {"right": 1, "right_top3": 1}),
        (_rec(RIGHT, 0.4), "smiles", {"right": 1, "right_top3": 1, "right_abstained": 1}),
        (_rec(RIGHT, 0.9, False), "smiles", {"right": 1, "right_top3": 1, "right_abstained": 1}),
        (_rec("{1}CCOC(C)=O.{1}[O]", 0.9), "smiles", {"wrong_confident": 1}),
        (_rec("{1}CCOC(C)=O.{1}[O]", 0.9, None), "smiles", {"wrong_confident": 1}),  # no index: not flagged
        (_rec("{1}CCOC(C)=O.{1}[O]", 0.59), "smiles", {}),
        (_rec("{2}CCOC(C)=O.{2}O", 0.9), "smiles", {"wrong_confident": 1}),  # coefficients count
        (_rec("{1}C.{1}O", 0.2, top_k=[{"prediction": "{1}C.{1}O"}, {"prediction": RIGHT}]), "smiles",
         {"right_top3": 1}),
        (_rec("{1}H2O.{1}C4H8O2", 0.9), "formula", {"right": 1, "right_top3": 1}),
        (_rec("{1}C2H4O2.{1}C2H6O", 0.0, fallback=True), "formula", {"fallbacks": 1}),
        ({"error": "line 1: bad"}, "smiles", {"refused": 1}),
        (_rec(RIGHT, 0.9, written_by="rule:fischer_esterification"), "smiles",
         {"right": 1, "right_top3": 1, "by_rule": 1}),
        (_rec(RIGHT, 0.9, written_by="model"), "smiles", {"right": 1, "right_top3": 1}),
    ],
)  # fmt: skip
def test_a_line_is_judged(rec: dict, style: str, counts: dict[str, int]) -> None:
    got = summarise([score_record(ROW, style, rec, 0.6)])
    assert got == {"lines": 1, "right": 0, "right_top3": 0, "wrong_confident": 0, "right_abstained": 0,
                   "fallbacks": 0, "refused": 0, "by_rule": 0} | counts  # fmt: skip


@pytest.mark.unit
def test_table_has_one_row_per_part_and_style() -> None:
    counts = {"lines": 4, "right": 3, "right_top3": 4, "wrong_confident": 1, "right_abstained": 0, "fallbacks": 0}
    rows = [{"part": p, "style": "smiles", "refused": 0, **counts} for p in ("dev", "held_out")]
    table = textbook_table({"settings": {"top_k": 3, "threshold": 0.6}, "table": rows})
    assert "| held_out | smiles | 4 | 3 (75.0%) | 4 (100.0%) | 1 (25.0%) |" in table
    assert len(table.splitlines()) == 4


def _folder(tmp_path: Path, ids: dict[str, list[str]]) -> Path:
    """A data folder holding the named rows of the bundled dev part."""
    lines = (DEFAULT_DIR / "dev.tsv").read_text(encoding="utf-8").splitlines()
    by_id = {line.split("\t")[0]: line for line in lines[1:]}
    for part, names in ids.items():
        text = "\t".join(COLUMNS) + "\n" + "".join(by_id[n] + "\n" for n in names)
        (tmp_path / f"{part}.tsv").write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.integration
def test_command_scores_a_few_rows_with_the_bundled_models(tmp_path: Path) -> None:
    data = _folder(tmp_path, {"dev": ["sn1_2", "combustion_1"], "held_out": ["fischer_esterification_1"]})
    out, recs = tmp_path / "res" / "t.json", tmp_path / "recs.jsonl"
    args = ["bench", "textbook", "--data", str(data), "--json", str(out), "--records", str(recs)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    summary = json.loads(out.read_text())
    assert summary["command"].startswith("gnnca bench textbook") and summary["reactions"] == {"dev": 2, "held_out": 1}
    assert summary["checkpoints"]["smiles"]["path"].endswith("gnn_smiles_chemist.pt")  # a chemist's lines
    assert summary["checkpoints"]["formula"]["path"].endswith("gnn_formula_chemist.pt")
    assert all(len(f["sha256"]) == 64 for f in [*summary["checkpoints"].values(), *summary["data"].values()])
    assert [(r["part"], r["style"], r["lines"]) for r in summary["table"]] == [
        (p, s, n) for p, n in (("dev", 2), ("held_out", 1)) for s in ("smiles", "formula", "reaction")
    ]
    lines = [json.loads(x) for x in recs.read_text().splitlines()]
    assert len(lines) == 9 and {r["style"] for r in lines} == {"smiles", "formula", "reaction"}
    for r in lines:
        assert r["right_top_k"] or not r["right"]
        assert r["refused"] or 0.0 <= r["confidence"] <= 1.0
    comb = next(r for r in lines if r["id"] == "combustion_1" and r["style"] == "formula")
    assert (comb["source"], comb["expected"]) == ("CH4.{2}O2", "{1}CO2.{2}H2O")
    assert "| held_out | reaction | 1 |" in res.stdout


@pytest.mark.integration
def test_check_reads_the_rows_without_a_model(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["bench", "textbook", "--check"])
    assert res.exit_code == 0, res.output
    assert "269 reactions in 84 classes, all balanced" in res.stdout
    data = _folder(tmp_path, {"dev": ["sn1_2"], "held_out": []})
    shutil.copy(data / "dev.tsv", tmp_path / "copy.tsv")
    (data / "dev.tsv").write_text((tmp_path / "copy.tsv").read_text().replace("{1}Cl", "{2}Cl"))
    res = CliRunner().invoke(app, ["bench", "textbook", "--check", "--data", str(data)])
    assert res.exit_code == 2
    last = res.output.strip().splitlines()[-1]
    assert last.endswith("does not balance the reactants (missing {}, extra {'Cl': 1, 'H': 1})")


@pytest.mark.integration
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--part", "test"], "--part must be dev, held_out or all"),
        (["--styles", "smiles,inchi"], "--styles takes smiles, formula, reaction"),
        (["--checkpoint", "no/such.pt"], "checkpoint not found"),
        (["--edit-checkpoint", "no/edits.pt"], "no/edits.pt: checkpoint not found"),
        (["--extent", "most"], "--extent must be one of"),
        (["--line-type", "3"], "--line-type must be auto, 1, 2 or model"),
        (["--set", "decode.no_such=1"], "no_such"),
        (["--threshold", "1.5"], "--threshold must lie in [0, 1]"),
    ],
)
def test_bad_options_are_one_line(args: list[str], message: str) -> None:
    res = CliRunner().invoke(app, ["bench", "textbook", *args])
    assert res.exit_code == 2
    assert len(res.output.strip().splitlines()) == 1 and message in res.output
