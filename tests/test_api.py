"""The Python API: load_predictor -> Prediction dataclasses, the README example, a cheap import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gnn_chemalgebra import load_predictor
from gnn_chemalgebra.api import MoleculeRole, Prediction
from gnn_chemalgebra.errors import InputError

pytestmark = pytest.mark.integration

AMOUNTS = "{2}CC(=O)Cl.{3}NCc1ccccc1"  # acetyl chloride is limiting: 2 of it react


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GNNCA_CHECKPOINT", raising=False)
    monkeypatch.delenv("GNNCA_EDIT_CHECKPOINT", raising=False)


def test_python_api() -> None:
    predictor = load_predictor(extent="limiting")
    preds = predictor.predict(AMOUNTS + "\n# a comment\nCC(=O)Cl.NCc1ccccc1>CCN(CC)CC>")
    assert [p.line for p in preds] == [1, 2, 3] and all(isinstance(p, Prediction) for p in preds)
    assert [p.blank for p in preds] == [False, True, False] and preds[1].prediction == ""
    assert preds[1].source == "# a comment" and preds[2].main_product == "CC(=O)NCc1ccccc1"
    p = preds[0]
    assert p.extent == 2 and p.extent_rule == "limiting" and not p.fallback and 0 < (p.confidence or 0) <= 1
    assert p.main_product == "CC(=O)NCc1ccccc1" and p.prediction == p.record["prediction"]
    assert all(isinstance(r, MoleculeRole) for r in p.roles) and {r.role for r in p.roles} == {"reactant"}
    (f,) = load_predictor(extent="limiting", byproducts="benchmark").predict(["{3}C2H3ClO.{3}C7H9N.{3}C6H15N"])
    assert "{3}C9H11NO" in f.prediction.split(".")  # formulas: the benchmark's formula model writes the amide
    (f,) = predictor.predict(["{2}C18H29N3O9S.{2}C2HF3O2"])  # a user's formulas: the chemist's formula model
    assert set(f.prediction.split(".")) == {"{2}C2HF3O2", "{2}C4H8", "{2}CO2", "{2}C13H21N3O7S"}
    with pytest.raises(InputError, match="<input>:1:"):
        predictor.predict(["H2O.CCO"])  # a formula and a SMILES in one line
    with pytest.raises(InputError, match="--extent"):
        load_predictor(extent="most")
    assert load_predictor().extent == "limiting"  # lines given in Python are free input: amounts
    with pytest.raises(InputError, match="did you mean 'decode.balance_beam'"):
        load_predictor(settings=["decode.balance_bem=2"])
    with pytest.raises(InputError, match="did you mean 'decode.balance_beam'"):
        load_predictor(settings="decode.balance_bem=2")  # one string is one setting, not its characters
    preds = predictor.predict(["{1}CCO.{1}CC(=O)Cl", "C1CC", "", "{1}CC(=O)Cl.{1}NCc1ccccc1"], skip_invalid=True)
    assert [(p.line, bool(p.error), bool(p.prediction)) for p in preds] == [
        (1, False, True),
        (2, True, False),
        (3, False, False),
        (4, False, True),
    ]
    assert preds[2].blank and not preds[1].blank  # the blank line in its place: zip(lines, preds) lines up
    assert preds[1].source == "C1CC" and preds[1].error.startswith("<input>:2: neither SMILES")
    for wrong, says in [(b"CCO.CC(=O)O", "got bytes"), (None, "got NoneType"), (42, "got int"), (["CCO", 3], "item 1")]:
        with pytest.raises(TypeError, match=says):
            predictor.predict(wrong)  # type: ignore[arg-type]


def test_readme_api_example_runs_as_documented(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    block = next(b for b in readme.split("```python\n")[1:] if "load_predictor" in b).split("```")[0]
    exec(compile(block, "README.md", "exec"), {})  # noqa: S102 - the README's own example
    printed = capsys.readouterr().out.splitlines()
    documented = [ln.split("# ", 1)[1] for ln in block.splitlines() if ln.startswith("print(")]
    assert printed[:2] == documented[:2]  # the prediction line, then extent / rule / fallback / confidence
    assert printed[2].startswith(documented[2].rstrip(".]").rstrip(", "))
    assert printed[3] == documented[3]  # an amounts line is calibrated too (its own model): no note


@pytest.mark.unit
def test_the_api_returns_the_one_typed_prediction() -> None:
    """The API's Prediction is the pipeline's own (no second class); its names are properties of it, and a line
    given back in its place (blank, refused, abstained on) is one too."""
    from gnn_chemalgebra.inference import prediction as typed

    assert Prediction is typed.Prediction and MoleculeRole is typed.MoleculeRole
    blank, bad = Prediction.passed_over(2, "# c"), Prediction.refused(3, "C1CC", "<input>:3: neither")
    assert blank.record == {"line": 2, "prediction": "", "blank": True} and blank.source == "# c" and blank.blank
    assert bad.record == {"line": 3, "prediction": "", "error": "<input>:3: neither"} and bad.roles == ()
    p = Prediction.of_line("{1}CCO", 0.3).placed(1, "{1}CCO", "in", 1)
    p.trust = typed.TrustFields(0.3, True, None, typed.DomainFields(False, 0.2, ["far"]), [], [
        typed.Alternative("{1}CCO", 0.3, None)
    ])  # fmt: skip
    assert p.top_k == (("{1}CCO", 0.3),) and p.calibrated and p.in_domain is False
    assert p.nearest_training_similarity == 0.2 and p.source == "{1}CCO" and p.record == p.to_json()
    p.withhold()
    assert p.abstained and p.prediction == "" and p.record["abstained"] is True and p.top_k[0][0] == "{1}CCO"


@pytest.mark.unit
def test_package_import_stays_cheap() -> None:
    code = "import sys, gnn_chemalgebra; assert callable(gnn_chemalgebra.load_predictor); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_api_arguments_are_checked_when_given() -> None:
    """A wrong argument is one InputError naming it (and the allowed values) at the call that takes it, not a raw
    TypeError from deep inside, nor accepted until the first prediction."""
    with pytest.raises(InputError, match="coef_set must be one of auto, in, out; got 'zz'"):
        load_predictor(coef_set="zz")
    with pytest.raises(InputError, match="device must be a string"):
        load_predictor(device=0)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"checkpoint must be a path \(str or os.PathLike\) or None, got 5 \(int\)"):
        load_predictor(checkpoint=5)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"edit_checkpoint must be a path .* got 1.5 \(float\)"):
        load_predictor(edit_checkpoint=1.5)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"nope.pt: no such checkpoint \(edit_checkpoint\)"):
        load_predictor(edit_checkpoint="nope.pt")  # at the call, not at the first SMILES prediction
    predictor = load_predictor()
    for kw, says in [
        ({"top_k": "3"}, "top_k must be an integer of at least 1, got '3' (str)"),
        ({"top_k": 0}, "top_k must be an integer of at least 1, got 0"),
        ({"beam": 2.5}, "beam must be an integer"),
        ({"workers": True}, "workers must be an integer"),
        ({"batch_size": None}, "batch_size must be an integer"),
        ({"min_confidence": "0.5"}, "min_confidence must be a number in [0, 1]"),
        ({"min_confidence": 1.5}, "min_confidence must be a number in [0, 1]"),
        ({"skip_invalid": "yes"}, "skip_invalid must be True or False"),
        ({"keep_out_of_domain": "no"}, "keep_out_of_domain must be True or False, got 'no'"),  # truthy
    ]:
        with pytest.raises(InputError) as err:
            predictor.predict(AMOUNTS, **kw)
        assert says in str(err.value), (kw, str(err.value))
    (p,) = predictor.predict(AMOUNTS, top_k=2, min_confidence=0)  # right values still work
    assert p.prediction and len(p.top_k) >= 1
    (q,) = predictor.predict(AMOUNTS, min_confidence=1.0, keep_out_of_domain=True)  # withheld by the pipeline
    assert q.abstained and q.prediction == "" and q.record["abstained"] is True and q.roles  # the rest kept
