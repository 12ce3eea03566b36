"""Ceilings and the recovery check on hand-made variant folders that follow ``data/layout.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _algebra_synth import write_variant
from typer.testing import CliRunner

from gnn_chemalgebra.cli import app
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.evaluation.ceiling import ceilings, recovery


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("built")
    write_variant(root, "ChemAlgebra_F_T1_x1", n_per_split=16, seed=1)
    write_variant(root, "ChemAlgebra_F_T2_x1", n_per_split=40, seed=2)
    return root


@pytest.mark.integration
def test_ceilings(built: Path) -> None:
    recs = {(r.variant, r.setting): r for r in ceilings(built)}
    assert len(recs) == 6
    for s in ("test_in", "test_cross", "test_out"):
        t1 = recs[("F_T1_x1", s)]
        assert t1.model == "oracle" and t1.EM == t1.EM_realised == 100.0 and t1.n == 16
        t2 = recs[("F_T2_x1", s)]
        assert t2.model == "bayes_ceiling" and t2.n_errors == 0 and 0 < t2.EM < 100
    # S_out admits more extents than S_in, so its ceiling is lower.
    assert recs[("F_T2_x1", "test_out")].EM < recs[("F_T2_x1", "test_in")].EM


@pytest.mark.integration
def test_recovery_clean(built: Path) -> None:
    recs = recovery(built)
    assert len(recs) == 14 and all(r.n for r in recs)
    for r in recs:
        assert r.identity_fail == r.decompose_mismatch == r.apply_roles_fail == 0


@pytest.mark.integration
def test_recovery_flags_corrupted_line(tmp_path: Path) -> None:
    write_variant(tmp_path, "ChemAlgebra_F_T1_x1", n_per_split=4)
    meta = tmp_path / "ChemAlgebra_F_T1_x1" / "meta-valid.jsonl"
    lines = meta.read_text().splitlines()
    rec = json.loads(lines[0])
    rec["xi"] += 1
    lines[0] = json.dumps(rec)
    meta.write_text("\n".join(lines) + "\n")
    bad = [r for r in recovery(tmp_path, "F_T1_x1") if r.split == "valid"][0]
    assert bad.identity_fail == 1 and bad.decompose_mismatch == 1 and bad.examples == [1]


@pytest.mark.integration
def test_cli_ceiling_json_and_table(built: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["ceiling", str(built), "--variant", "F_T2_x1", "--json"])
    assert res.exit_code == 0, res.output
    recs = json.loads(res.stdout)
    assert {r["setting"] for r in recs} == {"test_in", "test_cross", "test_out"}
    assert set(recs[0]) >= {"model", "variant", "setting", "EM", "EM_realised", "n"}
    res = runner.invoke(app, ["ceiling", str(built)])
    assert res.exit_code == 0 and "bayes_ceiling" in res.stdout and "oracle" in res.stdout
    res = runner.invoke(app, ["ceiling", str(built), "--variant", "S_T1_x1"])
    assert res.exit_code == 2 and "not found" in res.output


@pytest.mark.integration
def test_no_variants(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        ceilings(tmp_path)


@pytest.mark.integration
def test_cli_balance() -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["balance", "MnO4- + Fe+2 + H+ -> Mn+2 + Fe+3 + H2O"])
    assert res.exit_code == 0 and res.stdout.strip() == "MnO4- + 5 Fe+2 + 8 H+ -> Mn+2 + 5 Fe+3 + 4 H2O"
    res = runner.invoke(app, ["balance", "H2O -> H2"])
    assert res.exit_code == 1 and "impossible" in res.output and "Traceback" not in res.output
    res = runner.invoke(app, ["balance", "H2 + O2 -> H2O + H2O2"])
    assert res.exit_code == 0 and "underdetermined" in res.stdout and len(res.stdout.splitlines()) == 3
    res = runner.invoke(app, ["balance", "CCO + O=O >> O=C=O + O", "--repr", "smiles"])
    assert res.exit_code == 0 and res.stdout.strip() == "CCO + 3 O=O -> 2 O=C=O + 3 O"
    res = runner.invoke(app, ["balance", "H2 + O2"])
    assert res.exit_code == 2 and "arrow" in res.output


@pytest.mark.integration
def test_on_builder_output(tmp_path: Path) -> None:
    """The project's builder and the algebra agree on every line (small build: 80 reactions per split)."""
    build = pytest.importorskip("gnn_chemalgebra.data.build")
    variants = ["ChemAlgebra_F_T2_x1", "ChemAlgebra_S_T1_x1"]
    build.build_all(tmp_path, limit=80, workers=1, variants=variants, log=lambda *a, **k: None)
    for r in recovery(tmp_path):
        # decompose_mismatch may count formula isomerisations (empty nu); those are explained.
        assert r.identity_fail == r.unexplained == r.apply_roles_fail == 0, r
    recs = {(r.variant, r.setting): r for r in ceilings(tmp_path)}
    assert all(r.n_errors == 0 and r.n > 0 for r in recs.values())
    assert all(recs[("S_T1_x1", s)].EM == 100.0 for s in ("test_in", "test_cross", "test_out"))
