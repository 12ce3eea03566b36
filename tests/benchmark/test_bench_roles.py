"""``gnnca bench roles`` end to end: the bundled formula model on a toy variant, JSON + markdown + PNG."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.algebra.roles import ROLE_NU
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.data.dataset import write_toy_variant

pytestmark = pytest.mark.integration


def test_roles_command_on_toy(tmp_path):
    built = tmp_path / "built"
    write_toy_variant(built, "ChemAlgebra_F_T1_x1", {"test_in": 12})
    write_toy_variant(built, "ChemAlgebra_F_T2_x1", {"test_in": 12}, seed=1)
    out = tmp_path / "out"
    args = ["bench", "roles", "--built", str(built), "--variants", "F_T1_x1,F_T2_x1", "--limit", "10"]
    args += ["--out", str(out)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    data = json.loads((out / "role_metrics.json").read_text())
    assert set(data["reports"]) == {"F_T1_x1 test_in", "F_T2_x1 test_in"}
    assert data["command"].startswith("gnnca bench roles") and "--limit 10" in data["command"]
    for rep in data["reports"].values():
        assert rep["lines"] == 10 and rep["n_molecules"] >= 10
        assert sum(map(sum, rep["head"]["confusion_class"])) == rep["n_molecules"]
        assert sum(map(sum, rep["decoded"]["confusion_class"])) == rep["n_molecules"]
        assert len(rep["head"]["confusion_class"]) == len(ROLE_NU)
        assert sum(rep["calibration"]["top_label"]["count"]) == rep["n_molecules"]
    md = (out / "role_metrics.md").read_text()
    assert "## F_T2_x1 test_in" in md and "| reactant |" in md and "gnnca bench roles" in md
    assert (out / "role_calibration.png").read_bytes()[:4] == b"\x89PNG"
