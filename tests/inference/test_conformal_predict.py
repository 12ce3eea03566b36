"""``gnnca bench conformal`` then ``gnnca predict --coverage`` through the real CLI, on the bundled formula model
and the validation and test lines of a small build; and ``--min-confidence`` abstaining on lines out of domain
unless ``--keep-out-of-domain``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.cli import app

BUNDLED = Path(__file__).resolve().parents[2] / "gnn_chemalgebra" / "checkpoints"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory, built_small: Path) -> Path:
    """The bundled formula model copied, with an in-domain index of the small build's training reactions beside
    it (no calibration: the confidences are the raw ones, which the sets read as well)."""
    from gnn_chemalgebra.inference.predictor import Predictor, PredictorOptions
    from gnn_chemalgebra.inference.trust_stage import type1_model_sha256
    from gnn_chemalgebra.trust.annotate import Trust
    from gnn_chemalgebra.trust.domain import DomainIndex
    from gnn_chemalgebra.trust.fit import training_reactions

    ckpt = tmp_path_factory.mktemp("indexed") / "formula.pt"
    shutil.copy(BUNDLED / "gnn_default.pt", ckpt)
    shutil.copy(BUNDLED / "gnn_type1_default.pt", ckpt.parent)  # the Type-1 model it names
    sets, mols = training_reactions([built_small / "ChemAlgebra_F_T2_x1" / "meta-train.jsonl"])
    dom = DomainIndex.build(sets, mols, "formula")
    pred = Predictor.from_checkpoint(ckpt, options=PredictorOptions(extent="bayes"))
    Trust("formula", None, dom, {"extent": "bayes", "type1_sha256": type1_model_sha256(pred)}).save(ckpt)
    return ckpt


def _run(args: list[str]) -> tuple[int, list[str], str]:
    res = CliRunner().invoke(app, args)
    return res.exit_code, res.stdout.splitlines(), res.stderr


@pytest.fixture(scope="module")
def sets_file(indexed: Path, built_small: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sets") / "sets.json"
    code, lines, err = _run(
        ["bench", "conformal", "--checkpoint", str(indexed), "--built", str(built_small), "--valid",
         "T1_x1,T2_x1", "--top-k", "3", "--coverages", "0.5,0.8", "--out", str(out)]
    )  # fmt: skip
    assert code == 0, err
    assert lines[-1] == str(out)
    return out


@pytest.mark.integration
def test_fit_records_lines_k_and_binding(sets_file: Path, indexed: Path, built_small: Path) -> None:
    from gnn_chemalgebra.io import sha256_file

    d = json.loads(sets_file.read_text())
    assert d["kind"] == "gnnca-conformal" and d["format"] == 1 and d["score"] == "lac"
    assert d["fitted"]["top_k"] == 3 and d["fitted"]["coverages"] == [0.5, 0.8]
    (m,) = d["models"]
    assert m["checkpoint_sha256"] == sha256_file(indexed) and m["repr"] == "formula"
    assert m["trust_sha256"] == sha256_file(indexed.with_name("formula.pt.trust.json"))
    n_valid = len((built_small / "ChemAlgebra_F_T1_x1" / "src-valid.txt").read_text().splitlines())
    assert m["kinds"]["1"]["lines"] == n_valid and sorted(m["kinds"]) == ["1", "2"]
    assert sorted(m["kinds"]["1"]["quantiles"]) == ["1", "2", "3"]


@pytest.mark.integration
def test_predict_coverage_writes_sets_from_the_top_k(sets_file: Path, indexed: Path, built_small: Path) -> None:
    src = built_small / "ChemAlgebra_F_T1_x1" / "src-test_in.txt"
    base = [str(src), "--checkpoint", str(indexed), "--extent", "bayes", "--line-type", "1"]
    code, out, err = _run(["predict", *base, "--coverage", "0.8", "--conformal", str(sets_file), "--json"])
    assert code == 0, err
    recs = [json.loads(x) for x in out]
    fit = json.loads(sets_file.read_text())["models"][0]["kinds"]["1"]
    for r in recs:
        assert len(r["top_k"]) <= 5  # --top-k defaults to 5 with --coverage
    # the sidecar was fitted for k <= 3: a set of 5 alternatives is not stated, and stderr says so
    assert all(r["prediction_set"] is None and "top-k 5" in r["conformal_note"] for r in recs)
    assert "have no prediction set" in err
    code, out, err = _run(["predict", *base, "--coverage", "0.8", "--conformal", str(sets_file), "--top-k", "3",
                           "--json"])  # fmt: skip
    assert code == 0, err
    recs = [json.loads(x) for x in out]
    q = fit["quantiles"]["3"]["0.8"]
    for r in recs:
        want = [t for t in r["top_k"][:3] if 1 - t["probability"] <= q + 1e-9]
        assert r["prediction_set"] == [{"prediction": t["prediction"], "probability": t["probability"]} for t in want]
        assert r["set_size"] == len(want)
    code, text, _ = _run(["predict", *base, "--coverage", "0.8", "--conformal", str(sets_file), "--top-k", "3"])
    assert code == 0 and len(text) == len(recs)
    for line, r in zip(text, recs, strict=True):
        cells = line.split("\t")
        assert int(cells[0]) == r["set_size"] and cells[1::2] == [m["prediction"] for m in r["prediction_set"]]


@pytest.mark.integration
def test_coverage_needs_a_fit_of_this_checkpoint(sets_file: Path, built_small: Path, tmp_path: Path) -> None:
    src = built_small / "ChemAlgebra_F_T1_x1" / "src-test_in.txt"
    other = tmp_path / "other.pt"
    shutil.copy(BUNDLED / "gnn_type1_default.pt", other)
    code, out, err = _run(["predict", str(src), "--checkpoint", str(other), "--coverage", "0.8", "--conformal",
                           str(sets_file)])  # fmt: skip
    assert code == 2 and out == [] and "no conformal fit for other.pt" in err and "Traceback" not in err
    code, _, err = _run(["predict", str(src), "--checkpoint", str(other), "--coverage", "0.8"])
    assert code == 2 and "no conformal sidecar beside the checkpoint (other.pt.conformal.json)" in err
    code, _, err = _run(["predict", str(src), "--coverage", "0.8", "--columns"])
    assert code == 2 and "--columns and --coverage" in err
    code, _, err = _run(["predict", str(src), "--coverage", "1.5"])
    assert code == 2 and "--coverage must lie strictly between 0 and 1" in err


@pytest.mark.integration
def test_min_confidence_abstains_out_of_domain_unless_kept(indexed: Path, tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_text("{1}C2H5TeCl.{1}CH4O\n{2}CH3COCl.{2}C7H9N.{2}C6H15N\n")  # tellurium: in no training reaction
    base = [str(src), "--checkpoint", str(indexed)]
    code, recs, _ = _run(["predict", *base, "--json"])
    domain = [json.loads(x)["in_domain"] for x in recs]
    assert code == 0 and domain[0] is False
    code, out, err = _run(["predict", *base, "--min-confidence", "0"])
    assert code == 0 and len(out) == 2 and out[0] == ""
    assert "in.txt:1: out of domain (element(s) in no training reaction: Te" in err
    assert f"abstained on {domain.count(False)} of 2 predicted line(s) out of domain" in err
    assert (out[1] == "") is (domain[1] is False)
    code, out, err = _run(["predict", *base, "--min-confidence", "0", "--keep-out-of-domain"])
    assert code == 0 and all(out) and "out of domain" not in err
    code, _, err = _run(["predict", *base, "--keep-out-of-domain"])
    assert code == 2 and "--keep-out-of-domain goes with --min-confidence" in err


@pytest.mark.integration
def test_the_bundled_models_give_sets_without_conformal() -> None:
    """The bundled checkpoints carry their conformal sidecars: ``--coverage`` works out of the box, formula and
    SMILES lines alike, and each set is listed, sha256 and all, in the folder's checksums."""
    listed = json.loads((BUNDLED / "checksums.json").read_text())["files"]
    for name in ("gnn_default.pt", "gnn_smiles_default.pt"):
        assert f"{name}.conformal.json" in listed
    for line in ("{1}C2H3ClO.{1}C7H9N", "{1}CC(=O)Cl.{1}NCc1ccccc1"):
        res = CliRunner().invoke(app, ["predict", "-", "--extent", "bayes", "--coverage", "0.9", "--json"], input=line)
        assert res.exit_code == 0, res.stderr
        (rec,) = [json.loads(x) for x in res.stdout.splitlines()]
        assert rec["set_size"] >= 1 and rec["prediction_set"][0]["prediction"] == rec["prediction"]


@pytest.mark.integration
def test_chemist_lines_join_the_fit(indexed: Path, built_small: Path, tmp_path: Path) -> None:
    """``--chemist DIR:N``: the first N validation lines of a chemist's-sets folder join the Type-1 fit."""
    folder = tmp_path / "chemist" / "formula"
    folder.mkdir(parents=True)
    for name in ("src-valid.txt", "tgt-valid.txt"):
        lines = (built_small / "ChemAlgebra_F_T1_x1" / name).read_text().splitlines()[:12]
        (folder / name).write_text("\n".join(lines) + "\n")
    out = tmp_path / "sets.json"
    base = ["bench", "conformal", "--checkpoint", str(indexed), "--built", str(built_small), "--valid", "T1_x1:20",
            "--top-k", "2", "--coverages", "0.5", "--out", str(out)]  # fmt: skip
    code, _, err = _run([*base, "--chemist", f"{folder.parent}:5"])
    assert code == 0, err
    d = json.loads(out.read_text())
    n_valid = len((built_small / "ChemAlgebra_F_T1_x1" / "src-valid.txt").read_text().splitlines())
    assert d["models"][0]["kinds"]["1"]["lines"] == min(n_valid, 20) + 5
    assert d["fitted"]["chemist"] == {"folder": str(folder.parent), "limit": 5}
    code, _, err = _run([*base, "--chemist", f"{folder.parent}:x"])
    assert code == 2 and "whole number" in err
