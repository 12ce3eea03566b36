"""A checkpoint that names a Type-1 model (``decode.type1_model``) sends its Type-1 lines (equal coefficients) there
and the rest to itself: records say which file wrote them, input order is kept, ``--set decode.type1_model=`` turns
the routing off, a missing Type-1 file is one line, and a calibration only applies with the Type-1 model it was
fitted with. The bundled formula default is such a pair."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.cli import app
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.inference.predict_command import predict_lines
from gnn_chemalgebra.inference.predictor import Predictor, PredictorOptions

BUNDLED = Path(__file__).resolve().parents[2] / "gnn_chemalgebra" / "checkpoints"
MAIN, TYPE1 = "gnn_default.pt", "gnn_type1_default.pt"
LINES = [
    "{2}C2H4O2.{2}C2H6O",  # equal coefficients: Type 1
    "{3}CH3COCl.{1}C7H9N.{2}C6H15N",  # unequal: Type 2
    "{1}C7H7Cl.{1}C6H6O",  # Type 1
    "{4}H2.{1}CO2",  # Type 2
]


@pytest.fixture(scope="module")
def routed() -> Predictor:
    return Predictor.from_checkpoint(BUNDLED / MAIN, options=PredictorOptions(extent="bayes"))


@pytest.mark.integration
def test_bundled_formula_default_routes_by_line_type(routed: Predictor) -> None:
    assert routed.type1 is not None and routed.type1.type1 is None  # one level: the Type-1 model routes no further
    recs = predict_lines(LINES, routed).records
    assert [r["line_type"] for r in recs] == [1, 2, 1, 2]
    assert [r["model"] for r in recs] == [TYPE1, MAIN, TYPE1, MAIN]
    # each line as the model it went to writes it alone: routing changes who answers, not the answer
    alone = Predictor.from_checkpoint(BUNDLED / TYPE1, options=PredictorOptions(extent="bayes"))
    solo = predict_lines([LINES[0], LINES[2]], alone).records
    assert [recs[0]["prediction"], recs[2]["prediction"]] == [r["prediction"] for r in solo]


@pytest.mark.integration
def test_extent_rule_reaches_the_type1_model(routed: Predictor) -> None:
    before = routed.extent
    try:
        routed.extent = "limiting"
        assert routed.type1 is not None and routed.type1.extent == "limiting"
    finally:
        routed.extent = before


@pytest.mark.integration
def test_routing_off_with_an_empty_setting() -> None:
    plain = Predictor.from_checkpoint(
        BUNDLED / MAIN, options=PredictorOptions(extent="bayes", overrides=("decode.type1_model=",))
    )
    assert plain.type1 is None
    recs = predict_lines(LINES, plain).records
    assert all("model" not in r for r in recs)


@pytest.mark.integration
def test_missing_type1_model_is_one_line(tmp_path: Path) -> None:
    ckpt = tmp_path / "main.pt"
    shutil.copy(BUNDLED / MAIN, ckpt)  # without its Type-1 model beside it
    with pytest.raises(InputError, match="decode.type1_model is missing"):
        Predictor.from_checkpoint(ckpt)
    src = tmp_path / "in.txt"
    src.write_text(LINES[0] + "\n")
    res = CliRunner().invoke(app, ["predict", str(src), "--checkpoint", str(ckpt)])
    assert res.exit_code == 2
    assert "Traceback" not in res.output and "decode.type1_model is missing" in res.output


@pytest.mark.integration
def test_calibration_binds_to_its_type1_model(tmp_path: Path) -> None:
    """A sidecar fitted with the routed pair applies to it, not to the main model alone, nor after the Type-1
    file changed."""
    from gnn_chemalgebra.inference.trust_stage import trust_for, type1_model_sha256
    from gnn_chemalgebra.trust.annotate import Trust
    from gnn_chemalgebra.trust.calibrators import KINDS, Calibrator
    from gnn_chemalgebra.trust.linear import LinearModel

    ckpt = tmp_path / "main.pt"
    shutil.copy(BUNDLED / MAIN, ckpt)
    shutil.copy(BUNDLED / TYPE1, tmp_path / TYPE1)
    pred = Predictor.from_checkpoint(ckpt)
    flat = LinearModel.fit(*_toy_xy())
    bound = {"type1_sha256": type1_model_sha256(pred)}
    Trust("formula", Calibrator({KINDS["type1"].name: flat, KINDS["type2"].name: flat}), None, bound).save(ckpt)
    assert trust_for(pred) is not None
    alone = Predictor.from_checkpoint(ckpt, options=PredictorOptions(overrides=("decode.type1_model=",)))
    assert trust_for(alone) is None
    with open(tmp_path / TYPE1, "ab") as fh:  # another Type-1 model in its place
        fh.write(b"\0")
    assert trust_for(pred) is None


def _toy_xy():  # noqa: ANN202 - a logistic model fitted on a few rows of the calibrator's features
    import numpy as np

    from gnn_chemalgebra.trust.features import FEATURES

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, len(FEATURES)))
    return X, (X[:, 0] > 0).astype(int)


@pytest.mark.integration
def test_json_names_the_model_and_gives_type1_lines_a_second_opinion(tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_text("\n".join(LINES) + "\n")
    res = CliRunner().invoke(app, ["predict", str(src), "--json", "--extent", "bayes"])
    assert res.exit_code == 0, res.output
    recs = [json.loads(x) for x in res.stdout.splitlines() if x.startswith("{")]
    assert [r["model"] for r in recs] == [TYPE1, MAIN, TYPE1, MAIN]
    assert ["second_opinion" in r for r in recs] == [True, False, True, False]
    assert all(r["calibrated"] for r in recs)


@pytest.mark.integration
def test_spawned_workers_keep_the_type1_models_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    """A spawned worker loads the predictor again from :meth:`Predictor.spec`: the ``--set`` items reach its
    Type-1 model as in the parent (``decode.valence_check=false`` changes this Type-1 line's alternatives)."""
    from gnn_chemalgebra.inference import run

    line = "{4}C4H8O.{4}Na+.{4}H-.{4}C5H4N2S.{4}C6H2F3NO2"
    options = PredictorOptions(extent="bayes", overrides=("decode.valence_check=false",))
    parent = Predictor.from_checkpoint(BUNDLED / MAIN, options=options)
    again = parent.spec().load()  # what a spawned worker does
    assert again.type1 is not None and parent.type1 is not None
    assert again.type1.settings == parent.type1.settings and again.type1.settings.valence_check is False
    one = predict_lines([line, LINES[1]], parent, top_k=3, batch_size=1).records
    monkeypatch.setattr(run, "_can_fork", lambda _p: False)
    spawned = predict_lines([line, LINES[1]], parent, top_k=3, batch_size=1, workers=2).records
    assert spawned == one


@pytest.mark.integration
def test_a_type1_model_that_names_its_own_is_one_line(tmp_path: Path) -> None:
    """Which model would read the Type-1 model's Type-1 lines is ambiguous: refused, not silently ignored."""
    from gnn_chemalgebra.checkpoint import load_checkpoint, save_checkpoint

    ck = load_checkpoint(BUNDLED / TYPE1)
    ck["config"] = {**ck["config"], "decode": {**(ck["config"].get("decode") or {}), "type1_model": "other.pt"}}
    save_checkpoint(tmp_path / TYPE1, ck)
    shutil.copy(BUNDLED / MAIN, tmp_path / MAIN)
    src = tmp_path / "in.txt"
    src.write_text(LINES[0] + "\n")
    res = CliRunner().invoke(app, ["predict", str(src), "--checkpoint", str(tmp_path / MAIN)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "itself names a Type-1 model (other.pt)" in res.output and len(res.output.strip().splitlines()) == 1


@pytest.mark.integration
def test_an_ensemble_names_every_member(tmp_path: Path) -> None:
    """``a.pt,b.pt`` wrote its lines together: the record names both files, not the first alone."""
    for name in ("a.pt", "b.pt"):
        shutil.copy(BUNDLED / MAIN, tmp_path / name)
    shutil.copy(BUNDLED / TYPE1, tmp_path / TYPE1)
    pred = Predictor.from_checkpoint(f"{tmp_path / 'a.pt'},{tmp_path / 'b.pt'}")
    recs = predict_lines(LINES[:2], pred).records
    assert [r["model"] for r in recs] == [TYPE1, "a.pt,b.pt"]


@pytest.mark.integration
def test_a_second_opinion_is_the_mixed_models_line_on_type1_lines_only(routed: Predictor) -> None:
    plain = predict_lines(LINES, routed).records
    assert all("second_opinion" not in r for r in plain)
    routed.second_opinion = True
    try:
        recs = predict_lines(LINES, routed).records
        assert routed.spec().options.second_opinion
    finally:
        routed.second_opinion = False
    assert [r["prediction"] for r in recs] == [r["prediction"] for r in plain]  # the written lines do not change
    assert ["second_opinion" in r for r in recs] == [True, False, True, False]
    mixed = Predictor.from_checkpoint(
        BUNDLED / MAIN, options=PredictorOptions(extent="bayes", overrides=("decode.type1_model=",))
    )
    own = predict_lines([LINES[0], LINES[2]], mixed).records
    for rec, other in zip([recs[0], recs[2]], own, strict=True):
        assert rec["second_opinion"]["model"] == MAIN
        assert rec["second_opinion"]["prediction"] == other["prediction"]
        assert rec["second_opinion"]["agrees"] == (other["prediction"] == rec["prediction"])


@pytest.mark.integration
def test_plain_text_abstains_on_the_lines_json_does(tmp_path: Path) -> None:
    """Where the confidence decides what text output writes (--min-confidence), the second opinion is read as with
    --json, so both abstain on the same lines; plain text without it runs no second pass."""
    src = tmp_path / "in.txt"
    src.write_text("\n".join(LINES) + "\n")
    args = ["predict", str(src), "--extent", "bayes"]
    recs = [json.loads(x) for x in CliRunner().invoke(app, [*args, "--json"]).stdout.splitlines()]
    cut = sorted(r["confidence"] for r in recs)[1] + 1e-6  # abstain on the two least confident lines
    text = CliRunner().invoke(app, [*args, "--min-confidence", str(cut)])
    assert text.exit_code == 0, text.output
    abstained = [r["confidence"] < cut or r["in_domain"] is False for r in recs]  # out of domain: abstained too
    assert [line == "" for line in text.stdout.splitlines()] == abstained
    from gnn_chemalgebra.inference.options import PredictOptions
    from gnn_chemalgebra.inference.plan import resolve
    from gnn_chemalgebra.inference.predict_command import build_pipeline

    plain = build_pipeline(resolve(PredictOptions(input=str(src), extent="bayes")))
    assert plain.demands.confidence is False and not plain.models.load(str(BUNDLED / MAIN)).second_opinion
    shown = build_pipeline(resolve(PredictOptions(input=str(src), extent="bayes", min_confidence=0.5)))
    assert shown.demands.confidence and shown.models.load(str(BUNDLED / MAIN)).second_opinion
