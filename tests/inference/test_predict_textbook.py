"""``gnnca predict`` reads formulas in textbook notation through the shared parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.chem.molecule import bag_composition
from gnn_chemalgebra.cli import app

pytestmark = pytest.mark.integration


def test_predict_reads_groups_hydrates_and_explicit_charges(tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_text("{1}Ca(OH)2.{2}HCl\n{1}CuSO4·5H2O\n{1}SO4^2-.{1}Ba^2+\n{1}C6H5COOH.{1}CH3OH\n")
    result = CliRunner().invoke(app, ["predict", str(src), "--json"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["source"] for r in records] == [
        "{1}H2CaO2.{2}HCl",
        "{1}H10CuO9S",
        "{1}O4S-2.{1}Ba+2",
        "{1}C7H6O2.{1}CH4O",
    ]
    for r in records:  # every written line conserves the source's atoms and charge
        assert bag_composition(r["prediction"], "formula") == bag_composition(r["source"], "formula")
