"""Lines of reactions balanced with real by-products: the Type-2 draw with stoichiometric coefficients, the
shared closure helper, and the rewritten training examples built from such lines."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from gnn_chemalgebra.algebra.extent import S_IN
from gnn_chemalgebra.algebra.roles import PRODUCT, REACTANT, REAGENT
from gnn_chemalgebra.chem.bag import bag_totals, parse_bag
from gnn_chemalgebra.chem.molecule import composition
from gnn_chemalgebra.data.augmented import AugmentSettings, augment_example
from gnn_chemalgebra.data.byproduct_close import PRODUCT_AMONG_REACTANTS, close_sides
from gnn_chemalgebra.data.chemist_lines import chemist_line
from gnn_chemalgebra.data.dataset import attach_labels, attach_roles, example_from_terms
from gnn_chemalgebra.data.dropped_lines import type2_line, written_names_distinct
from gnn_chemalgebra.data.uspto import formula_of

pytestmark = pytest.mark.unit

ACID, AMINE, AMIDE = "CC(=O)O", "NCc1ccccc1", "CC(=O)NCc1ccccc1"


def _amide(reagents: list[str]) -> dict:
    closed = close_sides([ACID, AMINE], reagents, [AMIDE])
    assert closed.pop("ok"), closed
    return {"id": 7, "mit_split": None, "mit_index": None, **closed}


def _element_balance(rec: dict) -> Counter:
    c = rec["coefficients"]
    out: Counter = Counter()
    for m in rec["reactants"]:
        out.update({k: -v * c[m] for k, v in composition(m, "smiles").items()})
    for m in (*rec["products"], *rec["byproducts"]):
        out.update({k: v * c[m] for k, v in composition(m, "smiles").items()})
    return Counter({k: v for k, v in out.items() if v})


def test_an_amide_coupling_closes_with_water() -> None:
    rec = _amide(["CCN(CC)CC"])
    assert rec["byproducts"] == ["O"] and not _element_balance(rec)
    assert close_sides([ACID, AMIDE], [], [AMIDE])["reason"] == PRODUCT_AMONG_REACTANTS


def test_type2_lines_satisfy_the_identity_with_their_own_coefficients() -> None:
    # 1,2-dichloroethane + 2 aniline -> the diamine + 2 HCl: coefficients of 2 on both sides
    rec = {"id": 1, "reactants": ["ClCCCl", "Nc1ccccc1"], "reagents": ["O", "[K+]", "[K+]", "O=C([O-])[O-]"],
           "products": ["c1ccc(NCCNc2ccccc2)cc1"], "byproducts": ["Cl"],
           "coefficients": {"ClCCCl": 1, "Nc1ccccc1": 2, "c1ccc(NCCNc2ccccc2)cc1": 1, "Cl": 2}}  # fmt: skip
    assert not _element_balance(rec)
    xis, present = set(), 0
    for seed in range(60):
        for name in (None, {m: formula_of(m) for m in ["ClCCCl", "Nc1ccccc1", "O", "[K+]", "O=C([O-])[O-]",
                                                          "c1ccc(NCCNc2ccccc2)cc1", "Cl"]}):  # fmt: skip
            src, tgt, meta = type2_line(rec, S_IN, random.Random(seed), name)
            s, t = bag_totals(parse_bag(src)), bag_totals(parse_bag(tgt))
            nu = dict(meta["nu"])
            assert all(t.get(m, 0) == s.get(m, 0) + meta["xi"] * nu.get(m, 0) for m in {*s, *t, *nu})
            assert len(meta["src_roles"]) == len(parse_bag(src)) and len(meta["tgt_roles"]) == len(parse_bag(tgt))
            w = (name or {}).get("Nc1ccccc1", "Nc1ccccc1")
            assert nu[w] == -2 and s[w] >= 2 * meta["xi"]  # two anilines per reaction, enough of them written
            xis.add(meta["xi"])
            present += PRODUCT in meta["src_roles"]
            assert json.dumps(meta)
    assert len(xis) > 1 and present > 0  # extents vary; some lines hold products already present


def test_a_reagent_that_is_also_the_by_product_keeps_its_own_amounts() -> None:
    rec = _amide(["O", "CCN(CC)CC"])  # water as solvent, water given off
    assert rec["byproducts"] == ["O"]
    for seed in range(40):
        src, tgt, meta = type2_line(rec, S_IN, random.Random(seed))
        s, t = bag_totals(parse_bag(src)), bag_totals(parse_bag(tgt))
        assert t["O"] == s.get("O", 0) + meta["xi"] and meta["xi"] >= 1


def test_written_names_must_stay_distinct_for_a_type2_line() -> None:
    rec = {"reactants": ["CC(C)O"], "reagents": ["O"], "products": ["CCCO"], "byproducts": ["O"]}
    assert written_names_distinct(rec, None)  # water as solvent and by-product: fine
    assert not written_names_distinct(rec, {"CC(C)O": "C3H8O", "CCCO": "C3H8O", "O": "H2O"})  # isomers merge


def _example(line: tuple[str, str, dict], repr: str = "smiles"):
    src, tgt, meta = line
    ex = attach_roles(attach_labels(example_from_terms(parse_bag(src), vtype=1), meta, repr), meta)
    ex.tgt = tgt
    return ex


def test_rewritten_examples_keep_labels_and_balance() -> None:
    rec = _amide(["CCN(CC)CC", "[Na+]", "[Cl-]", "ClCCl"])
    line = chemist_line(rec, 2, random.Random(0))
    ex = _example(line)
    assert ex.src_roles is not None and set(ex.src_roles) == {REACTANT, REAGENT}
    settings = AugmentSettings(drop_reagents=0.5, salts=0.5)
    changed = 0
    for seed in range(30):
        out = augment_example(ex, settings, "smiles", random.Random(seed))
        assert out.nu == ex.nu and out.xi == ex.xi and out.main == ex.main == AMIDE and out.extras == ex.extras
        s, t = bag_totals(out.terms), bag_totals(parse_bag(out.tgt))
        assert all(t.get(m, 0) == s.get(m, 0) + out.xi * out.nu.get(m, 0) for m in {*s, *t, *out.nu})
        assert {m: s[m] for m in (ACID, AMINE)} == {ACID: 2, AMINE: 2}
        changed += out is not ex
    assert 0 < changed <= 30
    assert augment_example(ex, AugmentSettings(), "smiles", random.Random(0)) is ex
    no_roles = _example(line)
    no_roles.src_roles = None
    assert augment_example(no_roles, settings, "smiles", random.Random(0)) is no_roles
