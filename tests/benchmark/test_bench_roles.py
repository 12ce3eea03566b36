"""``gnnca bench roles`` end to end: the bundled formula model on a toy variant, JSON + markdown + PNG; and the
first-hypothesis balance record of ``scripts/eval_roles_balance.py``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.algebra.roles import ROLE_NU
from gnn_chemalgebra.benchmark.roles import balance_record
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.data.dataset import load_examples, write_toy_variant
from gnn_chemalgebra.inference.run import DEFAULT_CHECKPOINT

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


def test_balance_record_and_its_script_on_toy(tmp_path):
    """scripts/eval_roles_balance.py (README's command) appends the record balance_record returns."""
    built = tmp_path / "built"
    write_toy_variant(built, "ChemAlgebra_F_T2_x1", {"test_in": 12}, seed=1)
    rec = balance_record(DEFAULT_CHECKPOINT, built, "ChemAlgebra_F_T2_x1", limit=10, role_evidence=False)
    mols = sum(len(ex.mols) for ex in load_examples(built, "ChemAlgebra_F_T2_x1", "test_in", 10))
    by_role = rec["role_acc_by_gold_role"]
    assert rec["n"] == 10 and rec["role_evidence"] is False and sum(r["n"] for r in by_role.values()) == mols
    right = sum(r["n"] * r["acc"] for r in by_role.values()) / mols
    assert abs(right - rec["role_mol_acc"]) < 0.01 and 0 <= rec["first_hypothesis_balanced"] <= 100
    assert 0 <= rec["role_line_acc"] <= 100 and 0 <= rec["EM"] <= 100

    script = Path(__file__).resolve().parents[2] / "scripts" / "eval_roles_balance.py"
    out = tmp_path / "r.jsonl"
    args = ["--built", str(built), "--checkpoint", str(DEFAULT_CHECKPOINT), "--variant", "ChemAlgebra_F_T2_x1"]
    args += ["--limit", "10", "--no-role-evidence", "--label", "toy", "--out", str(out)]
    subprocess.run([sys.executable, str(script), *args], check=True, capture_output=True, text=True)
    line = json.loads(out.read_text())
    assert line.pop("label") == "toy" and line.pop("lines_per_s") > 0
    assert line == {k: v for k, v in rec.items() if k not in ("label", "lines_per_s", "checkpoint")} | {
        "checkpoint": str(DEFAULT_CHECKPOINT)
    }


def test_roles_of_type1_lines_come_from_the_model_that_writes_them(tmp_path, monkeypatch):
    """The bundled formula default hands Type-1 lines to its Type-1 model: the role head read on them and the
    roles written must both be that model's, not the head of one model beside the lines of another."""
    from gnn_chemalgebra.benchmark import roles
    from gnn_chemalgebra.inference.predictor import Predictor

    built = tmp_path / "built"
    write_toy_variant(built, "ChemAlgebra_F_T1_x1", {"test_in": 4})
    write_toy_variant(built, "ChemAlgebra_F_T2_x1", {"test_in": 4}, seed=1)
    heads, writers = [], []
    head_probabilities, predict_own = roles.head_probabilities, Predictor._predict_own

    def head(p, *a, **k):
        heads.append(p.source.checkpoint)
        return head_probabilities(p, *a, **k)

    def own(self, *a, **k):
        writers.append(self.source.checkpoint)
        return predict_own(self, *a, **k)

    monkeypatch.setattr(roles, "head_probabilities", head)
    monkeypatch.setattr(Predictor, "_predict_own", own)
    roles.role_report(DEFAULT_CHECKPOINT, built, ["F_T1_x1", "F_T2_x1"], limit=3, log=lambda _m: None)
    names = [[Path(c).name for c in got] for got in (heads, writers)]
    assert names == [["gnn_type1_default.pt", "gnn_default.pt"]] * 2
