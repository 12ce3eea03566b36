"""Role decisions blind to the coefficient pattern (model.mult_features=false), off by default."""

from __future__ import annotations

import pytest
import torch

from gnn_chemalgebra.data.bagbatch import collate_bags
from gnn_chemalgebra.data.featurize import Featurizer
from gnn_chemalgebra.models.gnn import DEFAULTS, BagGNNConfig, build_model

pytestmark = pytest.mark.unit

MOLS = ["C2H4O2", "C2H6O", "C4H8O2", "H2O4S"]  # acid, ethanol, ester (already present), sulfuric acid


def role_logits(mult_features: bool, totals: list[int]) -> torch.Tensor:
    feat = Featurizer("formula")
    torch.manual_seed(0)
    hp = BagGNNConfig.from_settings({"hidden": 32, "layers": 1, "mult_features": mult_features}, feat.settings(), 4)
    model = build_model(hp).eval()
    nterms = [1] * len(MOLS)
    with torch.no_grad():
        return model(collate_bags([feat.bag(MOLS, totals, nterms)]))["role_logits"]


def test_blind_model_reads_type1_and_type2_lines_alike() -> None:
    equal, unequal = role_logits(False, [3, 3, 3, 3]), role_logits(False, [5, 2, 1, 4])
    assert torch.allclose(equal, unequal)


def test_default_model_still_sees_the_pattern() -> None:
    assert DEFAULTS["mult_features"] is True  # bundled checkpoints (no such hparam) keep their behaviour
    assert not torch.allclose(role_logits(True, [3, 3, 3, 3]), role_logits(True, [5, 2, 1, 4]))


def test_blind_model_keeps_the_same_parameters() -> None:
    """Same state-dict keys either way, so a checkpoint can be fine-tuned across the switch."""
    feat = Featurizer("formula")
    keys = [
        set(build_model(BagGNNConfig.from_settings({"mult_features": f}, feat.settings(), 4)).state_dict())
        for f in (True, False)
    ]
    assert keys[0] == keys[1]


def evidence(mols: list[list[str]]) -> torch.Tensor:
    from gnn_chemalgebra.data.featurize import CHARGE_INDEX
    from gnn_chemalgebra.models.product_evidence import product_evidence

    feat = Featurizer("formula")
    batch = collate_bags([feat.bag(b, [1] * len(b), [1] * len(b)) for b in mols])
    return product_evidence(batch.mol_comp, batch.mol_graph, batch.num_graphs, CHARGE_INDEX)


def test_product_evidence_points_at_the_product_and_its_makers() -> None:
    ev = evidence([MOLS])  # columns: made (exists, ratio), maker (exists, ratio)
    acid, ethanol, ester, sulfuric = ev.tolist()
    assert ester[:2] == [1.0, pytest.approx(3 / 14)]  # acid + ethanol - water (3 atoms) over the ester's 14
    assert ester[1] < acid[1] and ester[1] < ethanol[1]  # the others are covered only loosely (by the ester)
    assert acid[2:] == ethanol[2:] == [1.0, pytest.approx(3 / 14)]
    assert sulfuric[:2] == [0.0, 1.0]  # no sulfur elsewhere: made from nothing
    assert sulfuric[3] > 2 * acid[3]  # only a loose maker (acid + H2SO4 cover ethanol with 6 atoms to spare)


def test_product_evidence_batches_bag_by_bag() -> None:
    other = ["C7H6O2", "CH4O", "C8H8O2", "H2O"]  # methyl benzoate from benzoic acid + methanol
    both = evidence([MOLS, other])
    assert torch.allclose(both, torch.cat([evidence([MOLS]), evidence([other])]))


def test_product_features_switch_adds_only_their_projection() -> None:
    feat = Featurizer("formula")
    keys = [
        set(build_model(BagGNNConfig.from_settings({"product_features": f}, feat.settings(), 4)).state_dict())
        for f in (False, True)
    ]
    assert keys[1] - keys[0] == {"prod_proj.weight", "prod_proj.bias"}
    assert DEFAULTS["product_features"] is False
