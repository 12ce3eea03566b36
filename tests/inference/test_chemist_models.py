"""Lines in the chemist's convention (a user's reactions) are read by the chemist's SMILES model where one is
bundled, benchmark files by the benchmark's; a SMILES checkpoint can name the bond-edit model beside it that writes
its product graphs (``decode.edit_model``), which the workers and the trust stage then use too."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gnn_chemalgebra.benchmark.export import slim_copy
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.inference import run
from gnn_chemalgebra.inference.options import PredictOptions
from gnn_chemalgebra.inference.pipeline import Models
from gnn_chemalgebra.inference.plan import resolve
from gnn_chemalgebra.inference.predict_command import predict_lines
from gnn_chemalgebra.inference.predictor import Predictor, PredictorOptions
from gnn_chemalgebra.inference.trust_stage import edit_model_path

BUNDLED = Path(__file__).resolve().parents[2] / "gnn_chemalgebra" / "checkpoints"


@pytest.fixture(scope="module")
def paired(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SMILES checkpoint naming ``edit_beside.pt`` (a copy of the bundled edit model) as its edit model."""
    folder = tmp_path_factory.mktemp("chemist")
    shutil.copy(BUNDLED / "edit_default.pt", folder / "edit_beside.pt")
    dst = folder / "gnn_smiles_chemist.pt"
    slim_copy(BUNDLED / "gnn_smiles_default.pt", dst, decode=["decode.edit_model=edit_beside.pt"])
    return dst


@pytest.mark.unit
def test_default_checkpoint_by_convention(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GNNCA_CHECKPOINT", raising=False)
    chemist = tmp_path / "gnn_smiles_chemist.pt"
    monkeypatch.setattr(run, "CHEMIST_SMILES_CHECKPOINT", chemist)
    assert run.default_checkpoint("smiles", "chemist") == run.SMILES_CHECKPOINT  # none bundled: the benchmark's
    chemist.write_bytes(b"x")
    assert run.default_checkpoint("smiles", "chemist") == chemist
    assert run.default_checkpoint("smiles", "benchmark") == run.SMILES_CHECKPOINT
    formula = tmp_path / "gnn_formula_chemist.pt"
    monkeypatch.setattr(run, "CHEMIST_FORMULA_CHECKPOINT", formula)
    assert run.default_checkpoint("formula", "chemist") == run.DEFAULT_CHECKPOINT  # no chemist's formula model
    formula.write_bytes(b"x")
    assert run.default_checkpoint("formula", "chemist") == formula
    assert run.default_checkpoint("formula", "benchmark") == run.DEFAULT_CHECKPOINT
    assert run.default_checkpoint(None, "chemist") == formula  # a line read as formulas by default
    monkeypatch.setenv("GNNCA_CHECKPOINT", str(tmp_path / "mine.pt"))
    assert run.default_checkpoint("smiles", "chemist") == tmp_path / "mine.pt"  # the user's choice wins


@pytest.mark.integration
def test_a_checkpoint_names_its_edit_model(paired: Path) -> None:
    pred = Predictor.from_checkpoint(paired)
    assert pred.source is not None and pred.source.edit_checkpoint is not None
    assert Path(pred.source.edit_checkpoint) == paired.parent / "edit_beside.pt"
    assert edit_model_path(pred) == paired.parent / "edit_beside.pt"  # what the trust stage binds to
    assert pred.source.load().source.edit_checkpoint == pred.source.edit_checkpoint  # a worker loads the same
    named = Predictor.from_checkpoint(paired, options=PredictorOptions(str(BUNDLED / "edit_default.pt")))
    assert named.source is not None and named.source.edit_checkpoint == str(BUNDLED / "edit_default.pt")


@pytest.mark.integration
def test_a_missing_named_edit_model_is_one_line(paired: Path, tmp_path: Path) -> None:
    alone = tmp_path / "alone.pt"
    shutil.copy(paired, alone)
    with pytest.raises(InputError, match="decode.edit_model is missing"):
        Predictor.from_checkpoint(alone)


@pytest.mark.integration
def test_user_lines_read_by_the_chemist_model_benchmark_files_not(
    paired: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("GNNCA_CHECKPOINT", raising=False)
    monkeypatch.setattr(run, "CHEMIST_SMILES_CHECKPOINT", paired)
    user = Models(resolve(PredictOptions(input="-")))
    chosen = user.for_repr("smiles")
    assert chosen.source is not None and Path(chosen.source.checkpoint) == paired
    assert user.for_repr("formula").source.checkpoint == str(run.CHEMIST_FORMULA_CHECKPOINT)
    src = tmp_path / "src-test.txt"  # a benchmark source file: the benchmark's convention and model
    src.write_text("{1}CC(=O)Cl.{1}NCc1ccccc1\n")
    bench = Models(resolve(PredictOptions(input=str(src))))
    assert bench.plan.byproducts == "benchmark"
    assert bench.for_repr("smiles").source.checkpoint == str(run.SMILES_CHECKPOINT)
    assert bench.for_repr("formula").source.checkpoint == str(run.DEFAULT_CHECKPOINT)
    asked = Models(resolve(PredictOptions(input="-", byproducts="benchmark")))  # the user can ask for it too
    assert asked.for_repr("smiles").source.checkpoint == str(run.SMILES_CHECKPOINT)
    rec = predict_lines(["{1}CC(=O)Cl.{1}NCc1ccccc1"], chosen).records[0]
    assert rec["prediction"]  # the pair decodes a line


@pytest.mark.integration
def test_the_chemists_line_does_not_depend_on_how_many_alternatives_are_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The bundled chemist's model searches its first hypotheses for one real by-products close
    (``decode.real_byproduct_beam``): the line written is the same with one alternative or five, and it is the
    first of them."""
    monkeypatch.delenv("GNNCA_CHECKPOINT", raising=False)
    lines = ["CC(=O)O.NCc1ccccc1", "CC(O)CC", "CCOC(C)=O.O", "O=C1CCCCC1.NCc1ccccc1"]
    got = {}
    for k in (1, 5):
        models = Models(resolve(PredictOptions(input="-", top_k=k)))
        got[k] = predict_lines(lines, models.for_repr("smiles")).records
    for one, five in zip(got[1], got[5], strict=True):
        assert one["prediction"] == five["prediction"] == five["top_k"][0]["prediction"]
