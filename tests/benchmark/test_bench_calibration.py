"""``gnnca bench calibration`` on a small build: fits on validation lines only, writes the sidecars beside the
checkpoint (small, no pickle), scores the test lines against their targets, draws the pictures, and refuses to
score without a calibration."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.benchmark.calibration import exact_labels, line_sets
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.trust.fit import training_reactions

BUNDLED = Path(__file__).resolve().parents[2] / "gnn_chemalgebra" / "checkpoints"


@pytest.mark.unit
def test_exact_labels_use_the_benchmark_scorer() -> None:
    assert exact_labels(["{1}H2O.{1}CO2", "{1}CO2"], ["{1}CO2.{1}H2O", "{1}CO2.{1}H2O"], "formula") == [True, False]
    assert exact_labels(["{1}OCC"], ["{1}CCO"], "smiles") == [True]  # canonical SMILES


@pytest.mark.unit
def test_line_sets_refuse_the_other_representation(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="representation"):
        line_sets(tmp_path, "formula", ["S_T1_x1"], "valid")
    with pytest.raises(InputError, match="no such file"):
        line_sets(tmp_path, "formula", ["T1_x1"], "valid")


@pytest.mark.integration
def test_fit_on_validation_then_score(built_small: Path, tmp_path: Path) -> None:
    ckpt = tmp_path / "formula.pt"
    shutil.copy(BUNDLED / "gnn_default.pt", ckpt)
    shutil.copy(BUNDLED / "gnn_type1_default.pt", ckpt.parent)  # the Type-1 model it names
    out = tmp_path / "out"
    args = ["bench", "calibration", "--checkpoint", str(ckpt), "--built", str(built_small), "--test", "T1_x1"]
    res = CliRunner().invoke(app, [*args, "--limit", "40", "--fit-beam", "3", "--out", str(out), "--tag", "small"])
    assert res.exit_code == 0, res.output
    rec = json.loads((out / "calibration_small.json").read_text())
    (model,) = rec["models"]
    files = model["fitted_on"]["calibration"]["files"]
    assert [Path(f["src"]).name for f in files] == ["src-valid.txt"] * 3
    assert [f.get("extent") for f in files] == [None, None, "limiting"]  # the Type-2 lines again, as amounts
    n_t1, n_t2 = (len((built_small / v / "src-valid.txt").read_text().splitlines()) for v in
                  ("ChemAlgebra_F_T1_x1", "ChemAlgebra_F_T2_x1"))  # fmt: skip
    assert model["fitted_on"]["calibration"]["lines"] == n_t1 + 2 * n_t2
    sets, _ = training_reactions([built_small / "ChemAlgebra_F_T2_x1" / "meta-train.jsonl"])
    assert model["fitted_on"]["domain"]["reactant_sets"] == len(sets)
    (s,) = model["sets"]
    assert s["lines"] == 40 and Path(s["src"]).name == "src-test_in.txt"
    for kind in ("raw", "calibrated"):
        assert 0.0 <= s[kind]["ECE"] <= 1.0 and sum(b["n"] for b in s[kind]["bins"]) == 40
    assert Path(model["plot"]).is_file() and Path(model["plot"]).stat().st_size > 10_000
    js, npz = ckpt.with_name("formula.pt.trust.json"), ckpt.with_name("formula.pt.trust.npz")
    assert js.stat().st_size + npz.stat().st_size < 5_000_000
    with zipfile.ZipFile(npz) as z:
        assert z.namelist() == ["fingerprints.npy"]  # plain arrays only: loaded with allow_pickle=False
    kinds = json.loads(js.read_text())["calibrator"]["fitted_on"]["line_types"]
    assert kinds["3"]["lines"] == n_t2  # limiting Type-2 lines have a model of their own (if both outcomes occur)
    if kinds["3"].get("fitted", True):
        src = built_small / "ChemAlgebra_F_T2_x1" / "src-test_in.txt"
        cmd = ["predict", str(src), "--checkpoint", str(ckpt), "--json", "--line-type", "2", "--extent", "limiting"]
        recs = [json.loads(x) for x in CliRunner().invoke(app, cmd).stdout.splitlines()]
        assert recs and all(r["calibrated"] is True and "calibration_note" not in r for r in recs)
    # scoring again from the saved sidecars gives the same numbers
    again = CliRunner().invoke(app, [*args, "--limit", "40", "--no-fit", "--out", str(out), "--tag", "again"])
    assert again.exit_code == 0, again.output
    s2 = json.loads((out / "calibration_again.json").read_text())["models"][0]["sets"][0]
    assert s2["calibrated"]["ECE"] == pytest.approx(s["calibrated"]["ECE"])
    assert kinds["4"]["lines"] == n_t1  # the Type-1 lines again, with the mixed model's second opinion
    # --keep-index: the calibration fitted again, the in-domain index (fingerprints, threshold, counts) kept as is
    domain, fps = json.loads(js.read_text())["domain"], npz.read_bytes()
    kept = CliRunner().invoke(app, [*args, "--limit", "40", "--keep-index", "--fit-beam", "3", "--out", str(out),
                                    "--tag", "kept", "--train", str(tmp_path / "no-such-build")])  # fmt: skip
    assert kept.exit_code == 0, kept.output
    assert json.loads(js.read_text())["domain"] == domain and npz.read_bytes() == fps
    info = json.loads((out / "calibration_kept.json").read_text())["models"][0]["fitted_on"]
    assert info["domain"] == domain["info"] and info["type1_checkpoint"] == "gnn_type1_default.pt"
    refused = CliRunner().invoke(app, [*args, "--keep-index", "--no-fit", "--out", str(out)])
    assert refused.exit_code == 2 and "--keep-index" in refused.output and "Traceback" not in refused.output


@pytest.mark.integration
def test_limiting_targets_are_the_gold_reaction_at_the_limiting_extent(built_small: Path) -> None:
    """With the gold extent the rebuild gives the benchmark's targets back; at the limiting extent every line stays
    balanced and consumes its limiting reactant."""
    from gnn_chemalgebra.algebra.extent import limiting_extent
    from gnn_chemalgebra.benchmark.calibration import limiting_targets
    from gnn_chemalgebra.chem.bag import bag_totals, format_bag
    from gnn_chemalgebra.chem.molecule import bag_composition

    d = built_small / "ChemAlgebra_F_T2_x1"
    src = (d / "src-valid.txt").read_text().splitlines()
    tgt = (d / "tgt-valid.txt").read_text().splitlines()
    own = limiting_targets(src, d / "meta-valid.jsonl", "formula", own_extent=True)
    assert sum(exact_labels([format_bag(o) for o in own], tgt, "formula")) >= 0.9 * len(src)  # full valid: 97.6%
    metas = [json.loads(x) for x in (d / "meta-valid.jsonl").read_text().splitlines()]
    moved = 0
    for s, m, lim, o in zip(src, metas, limiting_targets(src, d / "meta-valid.jsonl", "formula"), own, strict=True):
        assert bag_composition(format_bag(lim), "formula") == bag_composition(s, "formula")
        nu = {k: int(v) for k, v in m["nu"]}
        left = bag_totals(lim)
        if any(v < 0 for v in nu.values()):  # a limiting reactant is used up: no further extent fits
            assert limiting_extent(left, nu) == 0
        moved += format_bag(lim) != format_bag(o)
    assert moved > 0  # the benchmark's extent is often not the limiting one


@pytest.mark.integration
def test_scoring_without_a_calibration_is_one_line(built_small: Path, tmp_path: Path) -> None:
    ckpt = tmp_path / "plain.pt"
    shutil.copy(BUNDLED / "gnn_default.pt", ckpt)
    shutil.copy(BUNDLED / "gnn_type1_default.pt", ckpt.parent)  # the Type-1 model it names
    res = CliRunner().invoke(
        app,
        ["bench", "calibration", "--checkpoint", str(ckpt), "--built", str(built_small), "--no-fit", "--limit", "5",
         "--out", str(tmp_path / "out")],
    )  # fmt: skip
    assert res.exit_code == 2
    assert "no calibration beside the checkpoint" in res.output and "Traceback" not in res.output


@pytest.mark.integration
def test_shifted_validation_files_join_the_fit_and_a_wrong_folder_is_one_line(tmp_path: Path) -> None:
    from gnn_chemalgebra.benchmark.calibration import fit_sets

    for root, split in ((tmp_path / "built", "valid"), (tmp_path / "shift", "valid_out")):
        for v in ("ChemAlgebra_F_T1_x1", "ChemAlgebra_F_T2_x1"):
            d = root / v
            d.mkdir(parents=True)
            for kind in ("src", "tgt"):
                (d / f"{kind}-{split}.txt").write_text("{1}H2O\n")
    (tmp_path / "shift" / "ChemAlgebra_F_T1_x1" / "src-valid_out.txt").unlink()  # a variant without it is skipped
    sets = fit_sets(tmp_path / "built", "formula", ["T1_x1", "T2_x1"], tmp_path / "shift", ["valid_out", "x"])
    assert [(ls.variant, ls.split) for ls in sets] == [
        ("ChemAlgebra_F_T1_x1", "valid"),
        ("ChemAlgebra_F_T2_x1", "valid"),
        ("ChemAlgebra_F_T2_x1", "valid_out"),
    ]
    with pytest.raises(InputError, match="no such folder"):
        fit_sets(tmp_path / "built", "formula", ["T1_x1"], tmp_path / "nowhere", ["valid_out"])
    with pytest.raises(InputError, match="no shifted validation files"):
        fit_sets(tmp_path / "built", "formula", ["T1_x1"], tmp_path / "shift", ["valid_out"])


@pytest.mark.unit
def test_chemist_sets_are_type1_lines_in_the_chemists_convention(tmp_path: Path) -> None:
    from gnn_chemalgebra.benchmark.calibration import chemist_sets

    with pytest.raises(InputError, match="gnnca data chemist"):
        chemist_sets(tmp_path, "smiles", "valid")
    (tmp_path / "smiles").mkdir()
    for name in ("src-valid.txt", "tgt-valid.txt"):
        (tmp_path / "smiles" / name).write_text("{1}CC(=O)O.{1}NCc1ccccc1\n")
    (ls,) = chemist_sets(tmp_path, "smiles", "valid")
    assert (ls.line_type, ls.convention, ls.split) == (1, "chemist", "valid_chemist")


@pytest.mark.integration
def test_chemist_lines_are_predicted_in_their_convention(tmp_path: Path) -> None:
    """The calibration's records of a chemist's set are written with real by-products (the targets' convention),
    and the predictor goes back to the benchmark's afterwards."""
    from gnn_chemalgebra.benchmark.calibration import chemist_sets, predict_set
    from gnn_chemalgebra.inference.predictor import Predictor, PredictorOptions

    (tmp_path / "smiles").mkdir()
    for name in ("src-valid.txt", "tgt-valid.txt"):
        (tmp_path / "smiles" / name).write_text("{1}CCCCCBr.{1}[Na+].{1}[N-]=[N+]=[N-]\n")
    pred = Predictor.from_checkpoint(BUNDLED / "gnn_smiles_default.pt", options=PredictorOptions(extent="bayes"))
    (ls,) = chemist_sets(tmp_path, "smiles", "valid")
    (rec,) = predict_set(pred, ls, 1, None, None, "t", lambda _: None)
    assert rec["byproduct_convention"] == "chemist"
    assert pred.byproducts == "benchmark"
