"""``gnnca evaluate``: file mode, folder mode, JSON, and one-line errors with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.cli import app
from gnn_chemalgebra.evaluation.files import read_lines
from gnn_chemalgebra.evaluation.report import format_table, to_json

pytestmark = pytest.mark.integration

runner = CliRunner()


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")
    return path


def _run(*args: str):
    return runner.invoke(app, ["evaluate", *args])


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    return {
        "pred": _write(tmp_path / "pred.txt", ["{3}H2O.{2}HCl.{1}CO2", "{1}CO2.{2}H2O"]),
        "tgt": _write(tmp_path / "tgt.txt", ["{2}H2O.{2}HCl.{1}CH4", "{2}H2O.{1}CO2"]),
        "src": _write(tmp_path / "src.txt", ["{2}H2O.{2}HCl.{1}CH4", "{1}CH4.{2}O2"]),
    }


def test_json_output(files: dict[str, Path]) -> None:
    res = _run("--pred", str(files["pred"]), "--tgt", str(files["tgt"]), "--repr", "formula", "--json")
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.strip().splitlines()
    assert len(lines) == 1
    data = json.loads(lines[0])
    for key in ("EM", "JAC", "F1", "mol_JAC", "mol_F1", "n", "VAL", "mode", "topk"):
        assert key in data
    assert data["n"] == 2 and data["mode"] == "paper"
    assert data["EM"] == 50.0
    assert data["JAC"] == pytest.approx((4 / 7 + 1) / 2 * 100, abs=1e-4)
    assert "BAL" not in data


def test_table_output_with_source_and_strict(files: dict[str, Path]) -> None:
    args = ["--pred", str(files["pred"]), "--tgt", str(files["tgt"]), "--src", str(files["src"])]
    res = _run(*args, "--repr", "formula", "--mode", "strict")
    assert res.exit_code == 0, res.stderr
    assert "mode=strict" in res.stdout and "BAL" in res.stdout and "D+E" in res.stdout
    assert "57.14" not in res.stdout  # averaged over two examples: (57.14 + 100) / 2
    assert "78.57" in res.stdout
    data = json.loads(_run(*args, "--repr", "formula", "--mode", "strict", "--json").stdout)
    assert data["BAL"] == 50.0  # line 2 is balanced, line 1 is not


def _assert_one_line_error(res, *fragments: str) -> None:
    assert res.exit_code == 2
    err = res.stderr.strip().splitlines()
    assert len(err) == 1, res.stderr
    assert err[0].startswith("gnnca: error: ")
    for f in fragments:
        assert f in err[0]
    assert "Traceback" not in res.stderr and res.stdout == ""


def test_broken_prediction_coefficient(tmp_path: Path, files: dict[str, Path]) -> None:
    bad = _write(tmp_path / "bad.txt", ["{1}H2O", "{0}H2O"])
    res = _run("--pred", str(bad), "--tgt", str(files["tgt"]), "--repr", "formula")
    _assert_one_line_error(res, f"{bad}:2:", "positive")


def test_invalid_target_molecule(tmp_path: Path, files: dict[str, Path]) -> None:
    bad = _write(tmp_path / "tgt_bad.txt", ["{1}O", "{1}C1CC"])
    res = _run("--pred", str(files["pred"]), "--tgt", str(bad), "--repr", "smiles")
    _assert_one_line_error(res, f"{bad}:2:", "C1CC")


def test_line_count_mismatch(tmp_path: Path, files: dict[str, Path]) -> None:
    short = _write(tmp_path / "short.txt", ["{1}H2O"])
    res = _run("--pred", str(short), "--tgt", str(files["tgt"]), "--repr", "formula")
    _assert_one_line_error(res, "short.txt", "tgt.txt", "1 lines", "has 2")


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--pred", "p.txt"],
        ["--pred", "p.txt", "--tgt", "t.txt", "--pred-dir", "x"],
        ["--pred", "p.txt", "--tgt", "t.txt"],  # no --repr
        ["--pred", "p.txt", "--tgt", "t.txt", "--repr", "inchi"],
        ["--pred", "p.txt", "--tgt", "t.txt", "--repr", "smiles", "--mode", "lenient"],
        ["--pred", "missing.txt", "--tgt", "t.txt", "--repr", "smiles"],
        ["--pred", "p.txt", "--tgt", "t.txt", "--repr", "smiles", "--beam", "0"],
    ],
)
def test_bad_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "p.txt", ["{1}O"])
    _write(tmp_path / "t.txt", ["{1}O"])
    _assert_one_line_error(_run(*args))


def test_not_utf8(tmp_path: Path, files: dict[str, Path]) -> None:
    bad = tmp_path / "latin.txt"
    bad.write_bytes(b"{1}O\n{1}\xe9\n")
    _assert_one_line_error(_run("--pred", str(bad), "--tgt", str(files["tgt"]), "--repr", "smiles"), "UTF-8")


def test_beam_file(tmp_path: Path) -> None:
    tgt = _write(tmp_path / "tgt.txt", ["{1}O", "{2}C"])
    pred = _write(tmp_path / "pred.txt", ["{1}C", "{1}O", "{2}C", "{1}C"])
    res = _run("--pred", str(pred), "--tgt", str(tgt), "--repr", "smiles", "--beam", "2", "--json")
    data = json.loads(res.stdout)
    assert data["EM"] == 50.0 and data["topk"] == {"1": 50.0, "2": 100.0}
    table = _run("--pred", str(pred), "--tgt", str(tgt), "--repr", "smiles", "--beam", "2").stdout
    assert "top2" in table and "beam=2" in table


# --------------------------------------------------------------------------- folder mode
def _variant_folder(root: Path, name: str, tgt: list[str], src: list[str]) -> Path:
    d = root / name
    d.mkdir()
    for setting in ("test_in", "test_out", "test_cross"):
        _write(d / f"tgt-{setting}.txt", tgt)
        _write(d / f"src-{setting}.txt", src)
    return d


def test_folder_mode_formula(tmp_path: Path) -> None:
    data = _variant_folder(tmp_path, "ChemAlgebra_F_T1_x1", ["{1}OH2", "{1}CO2"], ["{1}H2O", "{1}CO2"])
    pd = tmp_path / "preds"
    pd.mkdir()
    _write(pd / "pred-test_in.txt", ["{1}OH2", "{1}CO2"])
    _write(pd / "pred-test_out.txt", ["{1}H2O", "{1}CO2"])  # right only after canonicalisation
    _write(pd / "pred-test_cross.txt", ["", "{1}CO2"])
    res = _run("--pred-dir", str(pd), "--data-dir", str(data), "--json")
    assert res.exit_code == 0, res.stderr
    records = json.loads(res.stdout)
    assert [r["setting"] for r in records] == ["test_in", "test_cross", "test_out"]
    by = {r["setting"]: r for r in records}
    assert all(r["repr"] == "formula" for r in records)
    assert by["test_in"]["EM"] == 100.0 and by["test_out"]["EM"] == 50.0 and by["test_cross"]["EM"] == 50.0
    assert by["test_in"]["BAL"] == 100.0  # sources were found beside the targets
    strict = json.loads(_run("--pred-dir", str(pd), "--data-dir", str(data), "--json", "--mode", "strict").stdout)
    assert {r["setting"]: r["EM"] for r in strict}["test_out"] == 100.0
    table = _run("--pred-dir", str(pd), "--data-dir", str(data)).stdout
    assert len([ln for ln in table.splitlines() if ln.startswith("test_")]) == 3


def test_folder_mode_smiles_partial_and_errors(tmp_path: Path) -> None:
    data = _variant_folder(tmp_path, "ChemAlgebra_S_T2_x5", ["{1}O"], ["{1}O"])
    pd = tmp_path / "preds"
    pd.mkdir()
    _assert_one_line_error(_run("--pred-dir", str(pd), "--data-dir", str(data)), "no prediction file")
    _write(pd / "pred-test_in.txt", ["{1}[H]O[H]"])
    records = json.loads(_run("--pred-dir", str(pd), "--data-dir", str(data), "--json").stdout)
    assert len(records) == 1 and records[0]["repr"] == "smiles" and records[0]["EM"] == 100.0
    _write(pd / "pred-test_out.txt", ["{1}O", "{1}O"])
    _assert_one_line_error(_run("--pred-dir", str(pd), "--data-dir", str(data)), "pred-test_out.txt")


def test_folder_mode_needs_repr_for_other_names(tmp_path: Path) -> None:
    data = _variant_folder(tmp_path, "my_data", ["{1}O"], ["{1}O"])
    pd = tmp_path / "preds"
    pd.mkdir()
    _write(pd / "pred-test_in.txt", ["{1}O"])
    _assert_one_line_error(_run("--pred-dir", str(pd), "--data-dir", str(data)), "--repr")
    res = _run("--pred-dir", str(pd), "--data-dir", str(data), "--repr", "smiles", "--json")
    assert json.loads(res.stdout)[0]["EM"] == 100.0


# --------------------------------------------------------------------------- files and report helpers
def test_read_lines_semantics(tmp_path: Path) -> None:
    p = tmp_path / "x.txt"
    p.write_bytes(b"a\r\n\nb")
    assert read_lines(p) == ["a", "", "b"]
    p.write_bytes(b"a\n\n")
    assert read_lines(p) == ["a", ""]  # the last empty line is an (empty) prediction
    p.write_bytes(b"")
    assert read_lines(p) == []
    p.write_bytes(b"\xef\xbb\xbf{2}C5H4N2S\r\nb\n")  # a byte-order mark, as gnnca predict accepts it
    assert read_lines(p) == ["{2}C5H4N2S", "b"]


def test_report_helpers() -> None:
    row = {"n": 1, "mode": "paper", "repr": "smiles", "beam": 1, "EM": 12.345678, "topk": {"1": 12.345678}}
    assert json.loads(to_json(row))["EM"] == 12.3457
    assert "12.35" in format_table(row)
    assert format_table([]) == "(no results)"
