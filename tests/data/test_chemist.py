"""The chemist's-convention sets on real USPTO-MIT reactions the benchmark's leftover rule drops: which reactions are
selected, how they close with real by-products (plausible stoichiometry only), why the others do not, and the
Type-1 lines they are written as."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest

from gnn_chemalgebra.algebra.balance import species_composition
from gnn_chemalgebra.algebra.extent import type1_extent
from gnn_chemalgebra.chem.bag import bag_totals, parse_bag
from gnn_chemalgebra.data.build import bundled_data_dir
from gnn_chemalgebra.data.chemist import SEPARATION_CHANGED, close_reaction, rule_dropped, separated
from gnn_chemalgebra.data.chemist_closure import (
    MISSING_ATOMS,
    MISSING_COUNTER_ION,
    MISSING_REDUCTANT,
    MISSING_WATER,
    close_plausibly,
    why_not_closed,
)
from gnn_chemalgebra.data.chemist_lines import chemist_line, type1_readable
from gnn_chemalgebra.data.uspto import RawReaction, formula_of
from gnn_chemalgebra.errors import InputError

pytestmark = pytest.mark.unit

# Real dropped USPTO-MIT reactions (reactants as the benchmark separates them -> the recorded product).
ETHERIFICATION = (
    ["Cc1nn(-c2ccc(C(F)(F)F)cc2)cc1C(C)CO", "COC(=O)Cc1cn(C)c2cc(O)ccc12"],
    ["COC(=O)Cc1cn(C)c2cc(OCC(C)c3cn(-c4ccc(C(F)(F)F)cc4)nc3C)ccc12"],
)  # fmt: skip  (MIT test 1)
ACETYLATION = (
    ["CC(=O)OC(C)=O", "CCCC1(O)CCC2C3CCC4CC(=O)CC(C)C4(C)C3CCC21C"],
    ["CCCC1(OC(C)=O)CCC2C3CCC4CC(=O)CC(C)C4(C)C3CCC21C"],
)  # fmt: skip  (MIT test 14)
CHLORINATION = (["Cc1cc(F)ccc1CO", "O=S(Cl)Cl"], ["Cc1cc(F)ccc1CCl"])  # thionyl chloride (MIT test 57)
BOC_REMOVAL = (
    ["CC(C)(C)OC(=O)N1CCC(COC(=O)C2CCC3CN2C(=O)N3OS(=O)(=O)O)CC1"],
    ["O=C(OCC1CCNCC1)C1CCC2CN1C(=O)N2OS(=O)(=O)O"],
)  # fmt: skip  (MIT valid 3)
ESTER_HYDROLYSIS = (["CCN(CC)CCN(C)Cc1cc(C)cc(C(=O)OC)c1"], ["CCN(CC)CCN(C)Cc1cc(C)cc(C(=O)O)c1"])  # MIT valid 5
NITRO_REDUCTION = (["Nc1cc2c(cc1[N+](=O)[O-])CCC2"], ["Nc1cc2c(cc1N)CCC2"])  # SnCl2 as reagent (MIT test 17)
SUZUKI = (["OB(O)c1ccccc1", "Cc1ccc(Br)cc1"], ["Cc1ccc(-c2ccccc2)cc1"])  # base and water not recorded as reactants
MALONATE = (
    ["CC(C)(C)OC(=O)CC(=O)[O-]", "CC1(C)OC(=O)C(CC(=O)O)O1"],
    ["CC(C)(C)OC(=O)CC(=O)CC1OC(C)(C)OC1=O"],
)  # fmt: skip  magnesium salt as reagent (MIT valid 9)


def _balanced(reactants: list[str], products: list[str], byproducts: tuple[str, ...], coefs: tuple[int, ...]) -> bool:
    left: dict[str, int] = {}
    species = [*reactants, *products, *byproducts]
    signs = [-1] * len(reactants) + [1] * (len(products) + len(byproducts))
    for mol, sign, c in zip(species, signs, coefs, strict=True):
        for k, v in species_composition(mol, "smiles").items():
            left[k] = left.get(k, 0) + sign * c * v
    return not any(left.values())


@pytest.mark.parametrize(
    ("reaction", "byproducts"),
    [
        (ETHERIFICATION, ("O",)),
        (ACETYLATION, ("CC(=O)O",)),  # not 2 alcohols + 1 anhydride -> 2 acetates + water
        (CHLORINATION, ("Cl", "O=S=O")),
        (BOC_REMOVAL, ("O=C=O", "C=C(C)C")),
    ],
)
def test_real_dropped_reactions_close_with_the_byproducts_a_chemist_writes(reaction, byproducts) -> None:
    reactants, products = reaction
    closure = close_plausibly(reactants, products, 2)
    assert closure is not None
    names, coefs = closure
    assert set(names) == set(byproducts)
    assert coefs == (1,) * len(coefs)  # one of each: the textbook equation
    assert _balanced(reactants, products, names, coefs)


def test_a_closure_balances_only_with_multiples_is_refused() -> None:
    """A methyl ester recorded without its water: four esters -> four acids + isobutene balances, but is arithmetic."""
    reactants, products = ESTER_HYDROLYSIS
    assert close_plausibly(reactants, products, 2) is None
    assert why_not_closed(reactants, products) == MISSING_WATER  # with water: the acid and methanol


@pytest.mark.parametrize(
    ("reaction", "reason"),
    [
        (NITRO_REDUCTION, MISSING_REDUCTANT),
        (SUZUKI, MISSING_WATER),  # boric acid + HBr once water is there
        (MALONATE, MISSING_COUNTER_ION),
        ((["CCO"], ["CCCl"]), MISSING_ATOMS),  # chlorine from nowhere
    ],
)
def test_why_a_reaction_does_not_close(reaction, reason: str) -> None:
    reactants, products = reaction
    assert close_plausibly(reactants, products, 2) is None
    assert why_not_closed(reactants, products) == reason


def test_a_reactant_used_twice_gets_its_coefficient() -> None:
    closure = close_plausibly(["CCO"], ["CCOCC"], 2)
    assert closure == (("O",), (2, 1, 1))


def test_type1_readable_needs_a_coefficient_without_common_factor() -> None:
    assert type1_readable([1, 1], [1])
    assert type1_readable([2], [1])  # a reagent carries k itself
    assert not type1_readable([2], [])
    assert not type1_readable([2, 4], [2])
    assert type1_readable([2, 3], [])


def test_a_line_keeps_the_stoichiometry_and_reads_back_its_extent() -> None:
    reaction = {
        "id": 0,
        "mit_split": "test",
        "mit_index": 7,
        "reactants": ["CCO"],
        "reagents": ["OS(=O)(=O)O", "c1ccccc1"],
        "products": ["CCOCC"],
        "byproducts": ["O"],
        "coefficients": {"CCO": 2, "CCOCC": 1, "O": 1},
    }
    for names in (None, {m: formula_of(m) for m in ("CCO", "OS(=O)(=O)O", "c1ccccc1", "CCOCC", "O")}):
        src, tgt, meta = chemist_line(reaction, 3, random.Random(0), names)
        s, t = parse_bag(src), parse_bag(tgt)
        w = (names or {}).get
        assert type1_extent(s) == 3 == meta["xi"]
        assert bag_totals(s)[w("CCO") or "CCO"] == 6 and bag_totals(t)[w("CCOCC") or "CCOCC"] == 3
        nu = dict(meta["nu"])
        tot_s, tot_t = bag_totals(s), bag_totals(t)
        assert all(tot_t.get(m, 0) == tot_s.get(m, 0) + 3 * nu.get(m, 0) for m in {*tot_s, *tot_t})
        assert meta["main_products"] == [[w("CCOCC") or "CCOCC", 3]] and meta["byproducts"] == [[w("O") or "O", 3]]
        assert sorted(meta["tgt_roles"]) == ["product", "product", "reagent", "reagent"]
    assert "C4H10O" in tgt and "{3}H2O" in tgt  # the formula line


def _mit_line(split: str, index: int) -> RawReaction:
    """One reaction of the bundled USPTO-MIT split, as the builder reads it."""
    base = bundled_data_dir()
    with gzip.open(base / "uspto_mit_mapped" / f"{split}.txt.gz", "rt") as fh:
        mapped = [next(fh) for _ in range(index + 1)][-1].rstrip("\n")
    with gzip.open(base / "uspto_mit_tgt" / f"tgt-{split}.txt.gz", "rt") as fh:
        target = [next(fh) for _ in range(index + 1)][-1].rstrip("\n").replace(" ", "")
    rxn, _, edits = mapped.partition(" ")
    return RawReaction(index, rxn, edits, None, target)


def test_close_reaction_on_a_real_dropped_line_and_refuses_a_kept_one() -> None:
    raw = _mit_line("test", 1)
    assert separated(raw) is not None
    res = close_reaction(raw)
    assert res["ok"] and res["byproducts"] == ["O"] and res["products"] == ETHERIFICATION[1]
    assert sorted(res["reactants"]) == sorted(ETHERIFICATION[0])
    assert res["reagents"] == ["CCCCP(CCCC)CCCC", "Cc1ccccc1"]  # as recorded, never consumed
    kept = _mit_line("test", 0)  # the builder keeps it: not a rule drop
    assert separated(kept) is None
    assert close_reaction(kept) == {"ok": False, "reason": SEPARATION_CHANGED}


def test_rule_dropped_reads_skipped_tsv(tmp_path: Path) -> None:
    (tmp_path / "skipped.tsv").write_text(
        "mit_split\tmit_index\treason\tdetail\n"
        "valid\t3\tleftover_rejected_by_rdkit\tproduct-side chain\n"
        "valid\t4\tunparsable_product\tX\n"
        "test\t9\tunbalanced_after_leftover\t\n"
        "train\t1\tleftover_rejected_by_rdkit\t\n"
    )
    assert rule_dropped(tmp_path) == {"valid": [3], "test": [9]}
    (tmp_path / "skipped.tsv").write_text(
        "mit_split\tmit_index\treason\tdetail\nvalid\tx\tleftover_rejected_by_rdkit\n"
    )
    with pytest.raises(InputError, match=r"skipped.tsv:2: expected mit_split"):
        rule_dropped(tmp_path)
    (tmp_path / "skipped.tsv").write_text("a\tb\n")
    with pytest.raises(InputError, match="header"):
        rule_dropped(tmp_path)
