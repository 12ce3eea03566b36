"""Mass-balance penalty and exact decoding with gold labels."""

from __future__ import annotations

import pytest
import torch

from gnn_chemalgebra.algebra.roles import ROLE_NU
from gnn_chemalgebra.chem.bag import format_bag
from gnn_chemalgebra.chem.molecule import composition
from gnn_chemalgebra.data.bagbatch import collate_bags
from gnn_chemalgebra.data.dataset import (
    BagDataset,
    ExtraVocab,
    load_examples,
    write_toy_variant,
)
from gnn_chemalgebra.data.featurize import CHARGE_INDEX, COMP_DIM, ELEMENT_INDEX, Featurizer
from gnn_chemalgebra.evaluation.metrics import evaluate_lines
from gnn_chemalgebra.inference.decode import decode_bag
from gnn_chemalgebra.models.losses import gold_main_composition
from gnn_chemalgebra.models.penalty import mass_balance_penalty

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    out = tmp_path_factory.mktemp("toy")
    for v in ("ChemAlgebra_F_T1_x1", "ChemAlgebra_F_T2_x1", "ChemAlgebra_S_T1_x1"):
        write_toy_variant(out, v, {"train": 20, "test_out": 10})
    return out


@pytest.mark.parametrize("variant", ["ChemAlgebra_F_T1_x1", "ChemAlgebra_S_T1_x1", "ChemAlgebra_F_T2_x1"])
def test_penalty_zero_on_gold_and_has_gradients(toy, variant):
    repr = "formula" if "_F_" in variant else "smiles"
    exs = load_examples(toy, variant, "train")
    feat = Featurizer(repr)
    vocab = ExtraVocab.build(exs)
    ds = BagDataset(exs, feat, vocab)
    batch = collate_bags(ds.data)
    nu = torch.tensor(ROLE_NU, dtype=torch.float)
    B = batch.num_graphs
    main = torch.stack([feat.molecule(ex.main)[1] if ex.main else torch.zeros(COMP_DIM) for ex in exs])
    assert torch.equal(gold_main_composition(batch, nu, CHARGE_INDEX, B), main)  # the product side
    left = torch.stack([sum((feat.molecule(e)[1] for e in ex.extras), torch.zeros(COMP_DIM)) for ex in exs])
    hard = torch.nn.functional.one_hot(batch.y_role, len(ROLE_NU)).float()
    assert mass_balance_penalty(hard, nu, batch.mol_comp, batch.mol_graph, left, main, B).item() == 0.0
    # every molecule called a product: products exceed reactants -> positive penalty with gradients
    logits = torch.zeros_like(hard, requires_grad=True)
    with torch.no_grad():
        logits[:, ROLE_NU.index(1)] = 5.0
    pen = mass_balance_penalty(logits.softmax(-1), nu, batch.mol_comp, batch.mol_graph, left, main, B)
    pen.backward()
    assert pen.item() > 0 and logits.grad.abs().sum() > 0


def test_gold_labels_decode_exactly(toy):
    for variant, split, floor in [
        ("ChemAlgebra_F_T1_x1", "train", 100.0),
        ("ChemAlgebra_F_T1_x1", "test_out", 100.0),
        ("ChemAlgebra_F_T2_x1", "train", 50.0),
    ]:
        exs = load_examples(toy, variant, split)
        lines = []
        for ex in exs:
            comps = {m: composition(m, "formula") for m in ex.mols + ex.extras}
            d = decode_bag(
                ex.terms, dict(zip(ex.mols, ex.nu_in, strict=False)), ex.extras, comps, "formula", ex.vtype, ex.cset
            )
            assert d.balanced
            lines.append(format_bag(d.terms))
        assert evaluate_lines(lines, [ex.tgt for ex in exs], "formula")["EM"] >= floor


def test_penalty_counts_hydrogens() -> None:
    """A SMILES bag whose by-product needs more hydrogens than the consumed molecules hold is penalised, though
    every heavy atom is covered: compositions carry explicit H (implicit hydrogens of the SMILES included)."""
    feat = Featurizer("smiles")
    d = feat.bag(["CC(=O)Cl"], [1], [1])  # C2H3ClO, 3 hydrogens
    assert d.mol_comp[0, ELEMENT_INDEX["H"]] == 3
    nu = torch.tensor(ROLE_NU, dtype=torch.float)
    consumed = torch.nn.functional.one_hot(torch.tensor([ROLE_NU.index(-1)]), len(ROLE_NU)).float()
    ketene = feat.molecule("C=C=O")[1][None]  # main product C2H2O
    hcl = torch.zeros(1, d.mol_comp.size(1))
    hcl[0, ELEMENT_INDEX["H"]], hcl[0, ELEMENT_INDEX["Cl"]] = 1, 1  # HCl: fits
    too_many_h = hcl.clone()
    too_many_h[0, ELEMENT_INDEX["H"]] = 5  # H5Cl: four hydrogens more than the bag has left
    graph = torch.zeros(1, dtype=torch.long)
    assert mass_balance_penalty(consumed, nu, d.mol_comp, graph, hcl, ketene, 1).item() == 0.0
    assert mass_balance_penalty(consumed, nu, d.mol_comp, graph, too_many_h, ketene, 1).item() > 0.0
