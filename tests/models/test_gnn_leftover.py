"""Generator term layout in decoding, the structured leftover head, and the training budget keys."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from gnn_chemalgebra.algebra.extent import term_roles
from gnn_chemalgebra.chem.bag import Term, parse_bag
from gnn_chemalgebra.chem.molecule import composition
from gnn_chemalgebra.data.bagbatch import collate_bags
from gnn_chemalgebra.data.dataset import (
    BagDataset,
    ExtraVocab,
    load_examples,
    write_toy_variant,
)
from gnn_chemalgebra.data.featurize import CHARGE_INDEX, ELEMENT_INDEX, Featurizer
from gnn_chemalgebra.inference.decode import decode_bag
from gnn_chemalgebra.inference.predictor import Predictor

pytestmark = pytest.mark.unit


def _ms(line_or_terms):  # multiset of (coef, mol)
    terms = parse_bag(line_or_terms) if isinstance(line_or_terms, str) else line_or_terms
    return Counter((t.coef, t.mol) for t in terms)


def test_type1_reagent_that_is_also_a_product_stays_a_separate_term():
    # CH3Cl + NH3 -> CH5N + HCl with HCl also a reagent: the generator writes {2}HCl twice, not {4}HCl.
    terms = [Term(2, "CH3Cl"), Term(2, "H3N"), Term(2, "HCl")]
    nu = {"CH3Cl": -1, "H3N": -1, "HCl": 1}
    comps = {m: composition(m, "formula") for m in nu}
    d = decode_bag(terms, nu, [], comps, "formula", 1, "in")
    assert d.balanced and d.main_product == "CH5N"
    assert _ms(d.terms) == _ms("{2}CH5N.{2}HCl.{2}HCl")


def test_type2_term_roles_split_reagent_and_excess_product():
    terms = [Term(3, "HCl"), Term(1, "HCl"), Term(4, "A"), Term(2, "B")]
    roles = term_roles(terms, {"A": -1, "B": -1, "HCl": 1}, vtype=2)
    assert roles == ["reagent", "product", "reactant", "reactant"]
    assert term_roles(terms, {"A": -1, "B": -1, "HCl": 1}, vtype=1)[:2] == ["reagent", "reagent"]


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    out = tmp_path_factory.mktemp("toy")
    write_toy_variant(out, "ChemAlgebra_F_T1_x1", {"train": 20})
    return out


def test_leftover_labels_and_slots(toy):
    exs = load_examples(toy, "ChemAlgebra_F_T1_x1", "train")
    feat = Featurizer("formula")
    vocab = ExtraVocab.build(exs)
    ds = BagDataset(exs, feat, vocab)
    for ex, d in zip(exs, ds.data, strict=True):
        want = Counter()
        for e in ex.extras:
            want.update(composition(e, "formula"))
        assert d.y_left[0, CHARGE_INDEX].item() == 2 + want.get("charge", 0)
        assert d.y_left[0, ELEMENT_INDEX["H"]].item() == want.get("H", 0)
    pred = Predictor.build({"hidden": 16, "layers": 1, "heads": 2, "dropout": 0.0}, feat, vocab, 1)
    batch = collate_bags(ds.data[:4])
    out = pred.model(batch)
    # one slot per (bag, element present) plus H and the charge for every bag
    for b in range(4):
        elems = set(out["left_elem"][out["left_bag"] == b].tolist())
        nodes = set(batch.z[batch.batch == b].tolist())
        assert elems == nodes | {ELEMENT_INDEX["H"], CHARGE_INDEX}

    # a line the decoder calls balanced does balance, whatever the (untrained) heads say
    def tot(terms):
        c = Counter()
        for t in terms:
            for k, v in composition(t.mol, "formula").items():
                c[k] += t.coef * v
        return {k: v for k, v in c.items() if v}

    for ex, r in zip(exs[:4], [p.to_json() for p in pred.predict(exs[:4])], strict=True):
        assert r["prediction"].startswith("{")
        if r["balanced"]:
            assert tot(parse_bag(r["prediction"])) == tot(ex.terms)


def test_leftover_candidates_read_counts_as_a_formula(toy):
    feat = Featurizer("formula")
    pred = Predictor.build({"hidden": 16, "layers": 1, "heads": 2}, feat, ExtraVocab(["HBr"]), 1)
    elems = torch.tensor([ELEMENT_INDEX["C"], ELEMENT_INDEX["H"], ELEMENT_INDEX["Cl"], CHARGE_INDEX])
    lp = torch.full((4, 6), -20.0)
    lp[0, 0] = lp[1, 1] = lp[2, 1] = lp[3, 2] = 0.0  # C0 H1 Cl1 charge 0
    cands = pred.decoder.leftover_candidates({"left_lp": lp, "left_elem": elems})
    assert cands[0][0] == "HCl"
    assert all(name != "HBr" for name, _ in cands)  # Br is not in the bag


def test_budget_stops_training(toy, tmp_path):
    from gnn_chemalgebra.config import load_config
    from gnn_chemalgebra.training.run import train

    cfg = load_config(
        "configs/gnn_tiny.yaml",
        [
            f"data.dir={toy}",
            "data.val_split=train",
            f"run_dir={tmp_path}",
            "train.max_steps=3",
            "train.tensorboard=false",
        ],
    )
    s = train(cfg)
    assert s["steps"] == 3 and s["out_of_budget"] and len(s["history"]) == 2  # 2 steps per epoch
    again = train(cfg, resume=True)  # a budget-stopped run is finished
    assert again["history"] == []


def test_inorganic_or_small_main_product_ranks_later():
    from gnn_chemalgebra.inference.decode import Decoded

    pred = Predictor.build({"hidden": 16, "layers": 1, "heads": 2}, Featurizer("formula"), ExtraVocab([]), 1)

    def dec(main, new):
        return Decoded(terms=[], nu={"A": -1}, new_products=new, xi=1, candidates=[1], posterior=[], main_product=main)

    assert pred.decoder.acceptable(dec("C2H4O2", [("HCl", 1), ("C2H4O2", 1)]))
    assert not pred.decoder.acceptable(dec("O4S", [("H2", 1), ("O4S", 1)]))  # no carbon
    assert not pred.decoder.acceptable(dec("CH4", [("C6H6", 1), ("CH4", 1)]))  # smaller than its by-product
    assert not pred.decoder.acceptable(Decoded(terms=[], nu={}, new_products=[], xi=0, candidates=[], posterior=[]))
