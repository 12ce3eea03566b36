"""Featurisation: batching of bags (indices shifted per bag) and coefficient-blind inputs."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from torch_geometric.utils import scatter

from gnn_chemalgebra.chem.bag import Term
from gnn_chemalgebra.data.bagbatch import collate_bags
from gnn_chemalgebra.data.dataset import ExtraVocab, example_from_terms, to_data
from gnn_chemalgebra.data.featurize import ELEMENT_INDEX, Featurizer, multiplicity_features
from gnn_chemalgebra.models.gnn import BagGNNConfig, build_model

pytestmark = pytest.mark.unit

NETWORK_INPUTS = ("x", "z", "edge_index", "edge_attr", "atom2mol", "mol_graph", "mol_feat", "mol_comp")


def _bag(terms, repr="smiles"):
    feat = Featurizer(repr)
    return to_data(example_from_terms([Term(k, m) for k, m in terms]), feat, ExtraVocab([])), feat


def test_batching_shifts_atom2mol_and_mol_graph():
    a, _ = _bag([(1, "CCO"), (2, "O"), (1, "[Na+]")])
    b, _ = _bag([(3, "c1ccccc1"), (1, "Cl")])
    batch = collate_bags([a, b, a])
    assert batch.atom2mol.max().item() == 3 + 2 + 3 - 1
    assert batch.mol_graph.tolist() == [0, 0, 0, 1, 1, 2, 2, 2]
    # every atom's molecule belongs to the atom's own graph
    assert torch.equal(batch.mol_graph[batch.atom2mol], batch.batch)
    # heavy-atom carbon count per molecule from nodes equals the composition column
    carbons = scatter((batch.z == ELEMENT_INDEX["C"]).float(), batch.atom2mol, dim=0, reduce="sum")
    assert torch.equal(carbons, batch.mol_comp[:, ELEMENT_INDEX["C"]])
    # edges stay inside molecules
    src, dst = batch.edge_index
    assert torch.equal(batch.atom2mol[src], batch.atom2mol[dst])


def test_formula_nodes_one_per_element_and_charge():
    d, _ = _bag([(1, "C2H6O"), (1, "H4B-")], "formula")
    assert d.num_nodes == 3 + 3  # C,H,O + B,H,charge
    assert d.mol_comp[1, ELEMENT_INDEX["charge"]].item() == -1


@pytest.mark.parametrize("transform", [lambda k: 3 * k, lambda k: k + 5, lambda k: 2 * k + 7])
@pytest.mark.parametrize(
    "repr,mols", [("smiles", ["CCO", "CC(=O)O", "O", "[Pd]"]), ("formula", ["C2H6O", "C2H4O2", "H2O", "Pd"])]
)
def test_network_inputs_are_scale_and_shift_free(transform, repr, mols):
    coefs = [2, 2, 1, 4]
    terms = [(k, m) for k, m in zip(coefs, mols, strict=False)]
    a, feat = _bag(terms, repr)
    b, _ = _bag([(transform(k), m) for k, m in reversed(terms)], repr)  # also reshuffled
    for key in NETWORK_INPUTS:
        assert torch.equal(getattr(a, key), getattr(b, key)), key
    assert not torch.equal(a.mol_coef, b.mol_coef)
    torch.manual_seed(0)
    hp = BagGNNConfig.from_settings({"hidden": 16, "layers": 1, "heads": 2, "dropout": 0.0}, feat.settings(), 3)
    model = build_model(hp).eval()
    oa, ob = model(collate_bags([a])), model(collate_bags([b]))
    assert torch.allclose(oa["role_logits"], ob["role_logits"])
    naive = build_model(dataclasses.replace(hp, name="naive")).eval()
    assert not torch.allclose(naive(collate_bags([a]))["coef_logits"], naive(collate_bags([b]))["coef_logits"])


def test_multiplicity_features_columns():
    f = multiplicity_features([2, 2, 5, 1], [1, 2, 1, 1])
    assert f[:, 0].tolist() == [0, 0, 0, 1]  # min
    assert f[:, 1].tolist() == [0, 0, 1, 0]  # max
    assert f[:, 2].tolist() == [1, 1, 0, 0]  # tie
    assert f[:, 3].tolist() == [0.5, 0.5, 1.0, 0.0]  # rank
    assert f[:, 4].tolist() == [0, 1, 0, 0]  # several terms
