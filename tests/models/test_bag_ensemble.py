"""Bag-GNN ensembles: the heads of several checkpoints averaged as log-probabilities, read by the runner as one."""

from __future__ import annotations

import pytest
import torch
from typer.testing import CliRunner

from gnn_chemalgebra.chem.bag import Term
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.data.dataset import collate_examples, example_from_terms
from gnn_chemalgebra.inference.run import DEFAULT_CHECKPOINT, SMILES_CHECKPOINT
from gnn_chemalgebra.inference.runner import load_bag_model, load_model
from gnn_chemalgebra.models.bag_ensemble import BagEnsemble, _mean_log_softmax

LINES = [
    [Term(3, "C2H3ClO"), Term(3, "C7H9N"), Term(3, "C6H15N")],
    [Term(2, "C2H4O2"), Term(2, "C2H6O"), Term(2, "H2O4S")],
]


@pytest.mark.unit
def test_mean_log_softmax_is_the_geometric_mean_and_pads_missing_classes() -> None:
    a, b = torch.tensor([[0.0, 1.0, 2.0]]), torch.tensor([[2.0, 0.0]])
    got = _mean_log_softmax([a, b])
    want0 = (a.log_softmax(-1)[0, 0] + b.log_softmax(-1)[0, 0]) / 2
    assert torch.isclose(got[0, 0], want0)
    assert got[0, 2] < -1000  # a class the second member lacks is all but impossible
    assert got.softmax(-1).argmax() == 0  # the members' joint favourite, not either one's alone


@pytest.mark.integration
def test_ensemble_of_one_model_twice_reads_as_that_model() -> None:
    _, feat, _, model = load_bag_model(str(DEFAULT_CHECKPOINT))
    _, _, _, twin = load_bag_model(str(DEFAULT_CHECKPOINT))
    batch = collate_examples([example_from_terms(t) for t in LINES], feat)
    with torch.no_grad():
        one = model.eval()(batch)
        ens = BagEnsemble([model, twin], same_vocab=True).eval()(batch)
    assert torch.allclose(ens["role_logits"].softmax(-1), one["role_logits"].softmax(-1), atol=1e-5)
    assert torch.allclose(ens["left_logits"].softmax(-1), one["left_logits"].softmax(-1), atol=1e-5)
    assert torch.equal(ens["left_elem"], one["left_elem"]) and torch.allclose(ens["extra_logits"], one["extra_logits"])


@pytest.mark.integration
def test_ensemble_moves_between_its_members() -> None:
    """A member with other weights pulls the averaged role probabilities off the first member's, toward its own."""
    _, feat, _, model = load_bag_model(str(DEFAULT_CHECKPOINT))
    _, _, _, other = load_bag_model(str(DEFAULT_CHECKPOINT))
    torch.manual_seed(0)
    with torch.no_grad():
        for p in other.role_head.parameters():
            p.add_(torch.randn_like(p) * 0.5)
    batch = collate_examples([example_from_terms(t) for t in LINES], feat)
    with torch.no_grad():
        pa, pb = (m.eval()(batch)["role_logits"].log_softmax(-1) for m in (model, other))
        ens = BagEnsemble([model, other], same_vocab=True).eval()(batch)["role_logits"]
    assert torch.allclose(ens, (pa + pb) / 2, atol=1e-5)
    assert not torch.allclose(ens.softmax(-1), pa.exp(), atol=1e-3)


@pytest.mark.integration
def test_load_model_reads_comma_joined_checkpoints_as_an_ensemble() -> None:
    lm = load_model(f"{DEFAULT_CHECKPOINT},{DEFAULT_CHECKPOINT}")
    assert isinstance(lm.runner.model, BagEnsemble) and len(lm.runner.model.members) == 2
    assert lm.runner.repr == "formula"


@pytest.mark.integration
def test_predict_with_an_ensemble_and_its_refusals(tmp_path) -> None:
    line = "{3}C2H3ClO.{3}C7H9N.{3}C6H15N\n"
    single = CliRunner().invoke(app, ["predict", "-", "--checkpoint", str(DEFAULT_CHECKPOINT)], input=line)
    twice = CliRunner().invoke(
        app, ["predict", "-", "--checkpoint", f"{DEFAULT_CHECKPOINT},{DEFAULT_CHECKPOINT}"], input=line
    )
    assert single.exit_code == 0 and twice.exit_code == 0, twice.output
    assert twice.stdout == single.stdout  # the same model twice: the same answer
    both = f"{DEFAULT_CHECKPOINT},{SMILES_CHECKPOINT}"
    mixed = CliRunner().invoke(app, ["predict", "-", "--repr", "formula", "--checkpoint", both], input=line)
    assert mixed.exit_code == 2 and "one representation" in mixed.output and "Traceback" not in mixed.output
    missing = CliRunner().invoke(
        app, ["predict", "-", "--checkpoint", f"{DEFAULT_CHECKPOINT},{tmp_path / 'nope.pt'}"], input=line
    )
    assert missing.exit_code == 2 and "nope.pt" in missing.output


@pytest.mark.integration
def test_load_predictor_takes_an_ensemble() -> None:
    from gnn_chemalgebra import load_predictor

    line = "{3}C2H3ClO.{3}C7H9N.{3}C6H15N"
    (single,) = load_predictor(str(DEFAULT_CHECKPOINT), extent="bayes").predict(line)
    (twice,) = load_predictor(f"{DEFAULT_CHECKPOINT},{DEFAULT_CHECKPOINT}", extent="bayes").predict(line)
    assert twice.prediction == single.prediction
