"""``gnnca predict`` with a calibration beside the checkpoint: every --json line has a numeric ``confidence`` and
``in_domain``; ``--min-confidence`` writes empty lines in place (alignment kept, reasons on stderr, counted);
``--top-k`` lists distinct, balanced lines, most probable first; a reaction of an element absent from training is
out of domain. The calibration is fitted here on the validation lines of a small build, as the benchmark command
does on the full one."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.chem.molecule import bag_composition
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.inference.options import PredictOptions
from gnn_chemalgebra.inference.pipeline import Models, Pipeline
from gnn_chemalgebra.inference.plan import resolve
from gnn_chemalgebra.inference.predict_sets import RunTrust
from gnn_chemalgebra.inference.prediction import Prediction
from gnn_chemalgebra.inference.source import LineSource
from gnn_chemalgebra.inference.stream import LineStream, StreamSpec
from gnn_chemalgebra.inference.trust_stage import TrustStage

BUNDLED = Path(__file__).resolve().parents[2] / "gnn_chemalgebra" / "checkpoints"


class FixedPredictor:
    """A stand-in network writing each source back; the trust fields come from ``annotate``."""

    repr, vtype = "formula", 1
    source = type1 = None  # built in memory: no sidecars, no Type-1 model

    def predict(self, examples, batch_size=256, beam=1):  # noqa: ANN001, ANN201
        lines = [".".join(t.mol for t in ex.terms) for ex in examples]  # confidence 0.9 when it holds water
        return [Prediction.of_line(line, 0.9 if "H2O" in line else 0.2) for line in lines]


def stages(pred: object, **spec: object) -> tuple[Pipeline, LineStream]:
    """The predict path over a stand-in model: a stream of ``spec`` (:class:`StreamSpec`) and its pipeline."""
    plan = resolve(PredictOptions(input="-"))  # plain text: no trust stage (the stand-in's confidences are kept)
    trust = TrustStage(plan.demands, RunTrust(plan.opts))
    pipeline = Pipeline(plan, Models.of_loaded(pred, plan), trust)  # type: ignore[arg-type]
    return pipeline, LineStream(StreamSpec(source_name="in.txt", **spec))  # type: ignore[arg-type]


@pytest.mark.unit
def test_min_confidence_abstains_in_place() -> None:
    text = b"H2O.ClNa\n\n# note\nCH4.O2\n}}bad{{\nH2O.HCl\nC2H6O\n"
    pipeline, stream = stages(FixedPredictor(), fixed_repr="formula", skip_invalid=True, min_confidence=0.5)
    raw = LineSource(io.BytesIO(text), "in.txt", 1000)
    outs = [o for group in pipeline.outcomes(stream, raw, lambda: False) for o in group]
    assert [o.line for o in outs] == list(range(1, 8))
    assert [o.text() for o in outs] == ["H2O.ClNa", "", "", "", "", "H2O.HCl", ""]
    assert [o.abstained is not None for o in outs] == [False, False, False, True, False, False, True]
    assert stream.counts.abstained == 2 and stream.counts.predicted == 4 and stream.counts.refused_total == 1
    slim = outs[3].json()
    assert slim["abstained"] is True and slim["prediction"] == "" and slim["confidence"] == 0.2
    assert "--min-confidence 0.5" in slim["reason"]


# --------------------------------------------------------------------------- the bundled formula model, fitted here
@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory, built_small: Path) -> Path:
    """The bundled formula model copied, with sidecars fitted on the small build's validation lines."""
    import numpy as np

    from gnn_chemalgebra.evaluation.metrics import parse_prediction, parse_reference, score_pair
    from gnn_chemalgebra.inference.predict_command import predict_lines
    from gnn_chemalgebra.inference.predictor import Predictor, PredictorOptions
    from gnn_chemalgebra.inference.trust_stage import type1_model_sha256
    from gnn_chemalgebra.trust.annotate import Trust
    from gnn_chemalgebra.trust.domain import DomainIndex, reactant_set
    from gnn_chemalgebra.trust.fit import fit_calibrator

    ckpt = tmp_path_factory.mktemp("fitted") / "formula.pt"
    shutil.copy(BUNDLED / "gnn_default.pt", ckpt)
    shutil.copy(BUNDLED / "gnn_type1_default.pt", ckpt.parent)  # the Type-1 model it names
    pred = Predictor.from_checkpoint(ckpt, options=PredictorOptions(extent="bayes"))
    records, labels, beams = [], [], []
    for variant, lt in (("ChemAlgebra_F_T1_x1", "1"), ("ChemAlgebra_F_T2_x1", "2")):
        d = built_small / variant
        recs = predict_lines((d / "src-valid.txt").read_text().splitlines(), pred, line_type=lt, beam=3).records
        for r, t in zip(recs, (d / "tgt-valid.txt").read_text().splitlines(), strict=True):
            ref = parse_reference(t, "formula")
            labels.append(score_pair(parse_prediction(r["prediction"], "formula").terms, ref).em)
            beams.append([score_pair(parse_prediction(e["prediction"], "formula").terms, ref).em for e in r["beam"]])
        records += recs
    cal = fit_calibrator(records, labels, beams, repr="formula", fitted_on={"files": ["src-valid.txt"]})
    sets, mols = [], set()
    for line in (built_small / "ChemAlgebra_F_T2_x1" / "meta-train.jsonl").read_text().splitlines():
        nu = json.loads(line)["nu"]
        sets.append([m for m, v in nu if v < 0])
        mols.update(m for m, _ in nu)
    dom = DomainIndex.build(sets, mols, "formula")
    dom.threshold = float(np.quantile([dom.check({"molecules": r["molecules"]})[0] for r in records], 0.02))
    assert all(reactant_set(r) for r in records)
    meta = {"extent": "bayes", "type1_sha256": type1_model_sha256(pred)}
    Trust("formula", cal, dom, meta).save(ckpt)  # as gnnca bench calibration
    return ckpt


def _predict(args: list[str]) -> tuple[int, list[str], str]:
    res = CliRunner().invoke(app, ["predict", *args])
    return res.exit_code, res.stdout.splitlines(), res.stderr


@pytest.mark.integration
def test_every_json_line_has_a_number_and_a_domain(fitted: Path, built_small: Path) -> None:
    # Type-2 lines read the Type-2 model fitted here; the Type-1 model wrote every small validation line right,
    # so Type-1 lines read that same model, marked uncalibrated: a number and a domain either way
    for variant, lt, calibrated in (("ChemAlgebra_F_T2_x1", "2", True), ("ChemAlgebra_F_T1_x1", "1", False)):
        src = built_small / variant / "src-test_in.txt"
        code, lines, _ = _predict([str(src), "--checkpoint", str(fitted), "--json", "--line-type", lt])
        assert code == 0
        recs = [json.loads(x) for x in lines]
        assert len(recs) == len(src.read_text().splitlines())
        assert all(isinstance(r["confidence"], float) and 0.0 <= r["confidence"] <= 1.0 for r in recs)
        assert all(isinstance(r["in_domain"], bool) and r["calibrated"] is calibrated for r in recs)
        assert any(r["confidence"] != r["raw_confidence"] for r in recs)


@pytest.mark.integration
def test_min_confidence_keeps_alignment(fitted: Path, tmp_path: Path) -> None:
    lines = [
        "{2}CH3COCl.{2}C7H9N.{2}C6H15N",
        "",
        "# a comment",
        "{1}C2H6O.{1}C2H4O2",
        "not a formula ((",
        "{1}C7H7Br.{1}C6H7BO2",
    ]
    src = tmp_path / "in.txt"
    src.write_text("\n".join(lines) + "\n")
    code, plain, _ = _predict([str(src), "--checkpoint", str(fitted), "--json", "--skip-invalid"])
    assert code == 0
    conf = {i: json.loads(x)["confidence"] for i, x in enumerate(plain) if "confidence" in json.loads(x)}
    assert len(conf) == 3
    cut = sorted(conf.values())[1]  # abstain on the least confident of the three
    # the confidence alone: lines out of domain kept (tests/inference/test_conformal_predict.py abstains on them)
    args = ["--skip-invalid", "--min-confidence", str(cut), "--keep-out-of-domain"]
    code, out, err = _predict([str(src), "--checkpoint", str(fitted), *args])
    assert code == 0 and len(out) == len(lines)
    kept = [i for i in conf if conf[i] >= cut]
    assert [i for i, x in enumerate(out) if x] == kept
    assert "abstained on 1 of 3 predicted line(s)" in err and f"in.txt:{min(conf, key=conf.get) + 1}:" in err


@pytest.mark.integration
def test_top_k_lines_are_distinct_balanced_and_sorted(fitted: Path, built_small: Path, tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_text("\n".join((built_small / "ChemAlgebra_F_T1_x1" / "src-test_in.txt").read_text().splitlines()[:30]))
    code, out, _ = _predict([str(src), "--checkpoint", str(fitted), "--json", "--top-k", "4"])
    assert code == 0
    longest = 0
    for r in map(json.loads, out):
        rows = r["top_k"]
        longest = max(longest, len(rows))
        assert 1 <= len(rows) <= 4
        probs = [row["probability"] for row in rows]
        assert probs == sorted(probs, reverse=True) and sum(probs) <= 1.0 + 1e-3
        keys = [frozenset(bag_composition(row["prediction"], "formula").items()) for row in rows]
        assert all(k == frozenset(bag_composition(r["source"], "formula").items()) for k in keys)
        assert len({row["prediction"] for row in rows}) == len(rows)
    assert longest >= 2
    code, cols, err = _predict([str(src), "--checkpoint", str(fitted), "--top-k", "3", "--columns"])
    assert code == 0 and all(len(c.split("\t")) % 2 == 0 for c in cols) and "--top-k" not in err
    code, text, err = _predict([str(src), "--checkpoint", str(fitted), "--top-k", "3"])  # plain text: the best line
    assert code == 0 and all("\t" not in t for t in text)
    assert "gnnca: --top-k 3: the alternatives are shown with --json or --columns" in err
    code, beamed, err = _predict([str(src), "--checkpoint", str(fitted), "--beam", "3"])
    assert code == 0 and beamed == text and "gnnca: --beam 3: the hypotheses are listed with --json" in err
    code, _, err = _predict([str(src), "--checkpoint", str(fitted), "--beam", "3", "--json"])
    assert code == 0 and "--beam" not in err


@pytest.mark.integration
def test_an_element_absent_from_training_is_out_of_domain(fitted: Path, tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_text("{1}C2H5TeCl.{1}CH4O\n")
    code, out, _ = _predict([str(src), "--checkpoint", str(fitted), "--json"])
    (rec,) = map(json.loads, out)
    assert code == 0 and rec["in_domain"] is False
    assert any("Te" in n for n in rec["domain_notes"])


@pytest.mark.integration
def test_a_checkpoint_without_sidecars_says_uncalibrated(tmp_path: Path) -> None:
    ckpt = tmp_path / "plain.pt"
    shutil.copy(BUNDLED / "gnn_default.pt", ckpt)
    shutil.copy(BUNDLED / "gnn_type1_default.pt", ckpt.parent)  # the Type-1 model it names
    src = tmp_path / "in.txt"
    src.write_text("{2}CH3COCl.{2}C7H9N.{2}C6H15N\n")
    code, out, _ = _predict([str(src), "--checkpoint", str(ckpt), "--json"])
    (rec,) = map(json.loads, out)
    assert code == 0 and rec["calibrated"] is False and rec["in_domain"] is None
    assert rec["confidence"] == rec["raw_confidence"] > 0


@pytest.mark.integration
def test_python_api_has_the_trust_fields(fitted: Path) -> None:
    from gnn_chemalgebra import load_predictor

    # unequal coefficients: a Type-2 line, whose model the fixture fitted (its Type-1 lines were all right); read
    # as amounts (the API's default rule, limiting) it is another line than the calibration measured
    (amounts,) = load_predictor(fitted).predict("{3}CH3COCl.{2}C7H9N.{2}C6H15N")
    assert amounts.extent_rule == "limiting" and not amounts.calibrated and "limiting" in amounts.calibration_note
    p = load_predictor(fitted, extent="bayes")
    lines = "{3}CH3COCl.{2}C7H9N.{2}C6H15N\n{1}C2H5TeCl.{1}CH4O"
    (a, b) = p.predict(lines, top_k=2, min_confidence=0.0, keep_out_of_domain=True)
    assert a.calibrated and isinstance(a.confidence, float) and a.top_k[0] == (a.prediction, a.confidence)
    assert b.in_domain is False and not b.abstained
    (_, out) = p.predict(lines, min_confidence=0.0)  # out of domain: abstained on unless kept, as gnnca predict does
    assert out.abstained and out.prediction == "" and out.in_domain is False
    (c,) = p.predict("{1}C2H5TeCl.{1}CH4O", min_confidence=1.0)
    assert c.abstained and c.prediction == ""


@pytest.mark.integration
def test_changed_decode_settings_are_not_called_calibrated(fitted: Path, built_small: Path) -> None:
    # the calibration was fitted with the checkpoint's saved decode settings: a --set that changes one keeps the
    # calibrator's number but may not claim it is calibrated, and says which setting
    src = built_small / "ChemAlgebra_F_T2_x1" / "src-test_in.txt"
    base = [str(src), "--checkpoint", str(fitted), "--json", "--line-type", "2"]
    code, plain, _ = _predict(base)
    code2, changed, _ = _predict([*base, "--set", "decode.balance_beam=7"])
    assert code == code2 == 0
    plain_recs, changed_recs = [json.loads(x) for x in plain], [json.loads(x) for x in changed]
    assert all(r["calibrated"] and "calibration_note" not in r for r in plain_recs)
    assert all(r["calibrated"] is False for r in changed_recs)
    assert all("decode.balance_beam" in r["calibration_note"] for r in changed_recs)
    assert all(isinstance(r["confidence"], float) for r in changed_recs)


@pytest.mark.integration
def test_type2_lines_under_another_extent_rule_are_not_called_calibrated(fitted: Path, built_small: Path) -> None:
    # fitted under the benchmark's rule (bayes): a Type-2 line written with the limiting reactant is another line,
    # whose chance of being right was never measured; Type-1 lines are written alike by both rules
    for variant, lt, calibrated in (("ChemAlgebra_F_T2_x1", "2", False), ("ChemAlgebra_F_T1_x1", "1", None)):
        src = built_small / variant / "src-test_in.txt"
        code, out, _ = _predict([str(src), "--checkpoint", str(fitted), "--json", "--line-type", lt,
                                 "--extent", "limiting"])  # fmt: skip
        recs = [json.loads(x) for x in out]
        assert code == 0 and recs and all(r["extent_rule"] == "limiting" for r in recs)
        if calibrated is False:
            assert all(r["calibrated"] is False and "'limiting'" in r["calibration_note"] for r in recs)
        else:  # the fixture's Type-1 lines read the Type-2 model (all right on validation): no rule note on them
            assert all("calibration_note" not in r for r in recs)
