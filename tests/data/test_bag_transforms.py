"""Training-time rewrites (data/bag_transforms.py): reagents leave, ions become salts and salts ions, and every
rewritten line still satisfies target = source + xi * nu with the reacting molecules untouched."""

from __future__ import annotations

import random

import pytest
from rdkit import Chem

from gnn_chemalgebra.algebra.roles import PRODUCT, REACTANT, REAGENT
from gnn_chemalgebra.chem.bag import bag_totals, parse_bag
from gnn_chemalgebra.chem.molecule import composition
from gnn_chemalgebra.data.bag_transforms import (
    Line,
    consistent,
    drop_unconsumed,
    join_smiles,
    split_salt,
    swap_salts,
    unconsumed,
)

pytestmark = pytest.mark.unit

R, G, P = REACTANT, REAGENT, PRODUCT
ESTER, ACID = "COC(=O)c1ccccc1", "O=C(O)c1ccccc1"


def _line(src: str, src_roles: list[str], tgt: str, tgt_roles: list[str], nu: dict[str, int], xi: int) -> Line:
    return Line(tuple(parse_bag(src)), tuple(src_roles), tuple(parse_bag(tgt)), tuple(tgt_roles), nu, xi)


def _saponification(xi: int = 2) -> Line:
    """Methyl benzoate + water -> benzoic acid + methanol, NaOH as ions and THF as reagents (Type 1, k = xi)."""
    return _line(
        f"{{{xi}}}{ESTER}.{{{xi}}}O.{{{xi}}}[Na+].{{{xi}}}[OH-].{{{xi}}}C1CCOC1",
        [R, R, G, G, G],
        f"{{{xi}}}{ACID}.{{{xi}}}CO.{{{xi}}}[Na+].{{{xi}}}[OH-].{{{xi}}}C1CCOC1",
        [P, P, G, G, G],
        {ESTER: -1, "O": -1, ACID: 1, "CO": 1},
        xi,
    )


def _williamson() -> Line:
    """Type 2: MeI + phenol -> anisole + HI with K2CO3 written as ions, two anisoles already present."""
    return _line(
        "{4}CI.{3}Oc1ccccc1.{2}COc1ccccc1.{4}[K+].{2}O=C([O-])[O-]",
        [R, R, P, G, G],
        "{5}COc1ccccc1.{3}I.{1}CI.{4}[K+].{2}O=C([O-])[O-]",
        [P, P, R, G, G],
        {"CI": -1, "Oc1ccccc1": -1, "COc1ccccc1": 1, "I": 1},
        3,
    )


def _reactive_mols(line: Line) -> dict[str, int]:
    totals = bag_totals(list(line.src))
    return {m: totals[m] for m in line.nu if m in totals}


def test_the_fixtures_are_balanced_and_name_their_unconsumed_molecules() -> None:
    assert consistent(_saponification()) and consistent(_williamson())
    assert unconsumed(_saponification()) == ["[Na+]", "[OH-]", "C1CCOC1"]
    assert unconsumed(_williamson()) == ["[K+]", "O=C([O-])[O-]"]
    broken = _saponification()
    assert not consistent(Line(broken.src, broken.src_roles, broken.tgt[1:], broken.tgt_roles[1:], broken.nu, 2))


def test_dropping_reagents_keeps_the_reaction_and_the_identity() -> None:
    line = _saponification()
    seen: set[frozenset[str]] = set()
    for seed in range(40):
        out = drop_unconsumed(line, 0.5, random.Random(seed))
        assert consistent(out)
        assert _reactive_mols(out) == _reactive_mols(line)  # reactants untouched
        assert {t.mol for t in out.tgt} >= {ACID, "CO"}
        assert len(out.src) == len(out.src_roles) and len(out.tgt) == len(out.tgt_roles)
        seen.add(frozenset(t.mol for t in out.src))
    assert len(seen) > 4  # several subsets of the three reagents drawn
    assert drop_unconsumed(line, 0.0, random.Random(0)) is line
    bare = drop_unconsumed(line, 1.0, random.Random(0))
    assert {t.mol for t in bare.src} == {ESTER, "O"} and set(bare.src_roles) == {R}


def test_ions_become_their_salt_and_back_on_both_sides() -> None:
    line = _saponification(xi=3)
    salt = swap_salts(line, 1.0, random.Random(0), "smiles")
    assert consistent(salt)
    naoh = [t for t in salt.src if "Na" in t.mol]
    assert len(naoh) == 1 and naoh[0].coef == 3 and "." not in naoh[0].mol
    assert Chem.MolToSmiles(Chem.MolFromSmiles(naoh[0].mol)) == Chem.MolToSmiles(Chem.MolFromSmiles("O[Na]"))
    assert [t for t in salt.tgt if "Na" in t.mol] == naoh and "[OH-]" not in {t.mol for t in salt.tgt}
    back = swap_salts(salt, 1.0, random.Random(0), "smiles")
    assert consistent(back)
    assert bag_totals(list(back.src)) == bag_totals(list(line.src))
    assert bag_totals(list(back.tgt)) == bag_totals(list(line.tgt))


def test_a_two_to_one_salt_keeps_its_counts() -> None:
    line = _williamson()
    out = swap_salts(line, 1.0, random.Random(0), "smiles")
    assert consistent(out)
    k2co3 = [t for t in out.src if "K" in t.mol]
    assert len(k2co3) == 1 and k2co3[0].coef == 2  # 4 K+ and 2 carbonate = 2 K2CO3
    assert composition(k2co3[0].mol, "smiles") == composition("O=C(O[K])O[K]", "smiles")
    assert split_salt(k2co3[0].mol) == (("O=C([O-])[O-]", 1), ("[K+]", 2))
    back = swap_salts(out, 1.0, random.Random(0), "smiles")
    assert bag_totals(list(back.src)) == bag_totals(list(line.src)) and consistent(back)


def test_formula_ions_become_a_salt_formula() -> None:
    line = _line(
        "{2}C7H8O2.{2}H2O.{2}Na+.{2}HO-", [R, R, G, G], "{2}C6H6O2.{2}CH4O.{2}Na+.{2}HO-", [P, P, G, G],
        {"C7H8O2": -1, "H2O": -1, "C6H6O2": 1, "CH4O": 1}, 2,
    )  # fmt: skip
    out = swap_salts(line, 1.0, random.Random(0), "formula")
    assert consistent(out) and "HNaO" in {t.mol for t in out.src} and "HNaO" in {t.mol for t in out.tgt}


def test_consumed_ions_and_unpaired_amounts_stay_as_written() -> None:
    # NaOH as a reactant (a neutralisation): its ions are consumed, so they are never joined
    line = _line(
        "{1}CC(=O)O.{1}[Na+].{1}[OH-]", [R, R, R], "{1}CC(=O)[O-].{1}[Na+].{1}O", [P, P, P],
        {"CC(=O)O": -1, "[OH-]": -1, "CC(=O)[O-]": 1, "O": 1, "[Na+]": 0}, 1,
    )  # fmt: skip
    assert swap_salts(line, 1.0, random.Random(0), "smiles") is line
    odd = _line("{1}CI.{2}[Na+].{1}[Cl-]", [R, G, G], "{1}C.{2}[Na+].{1}[Cl-]", [P, G, G], {"CI": -1, "C": 1}, 1)
    assert swap_salts(odd, 1.0, random.Random(0), "smiles") is odd  # 2 Na+ with 1 Cl- pair up into no salt


def test_salt_helpers() -> None:
    assert join_smiles("[Na+]", "[H-]", 1, 1) is None  # a hydride has no O, N, S or halogen to bond to
    assert join_smiles("[Ca+2]", "[Cl-]", 1, 2) is not None
    assert split_salt("CCO") is None and split_salt("CC(=O)O[Na]") == (("CC(=O)[O-]", 1), ("[Na+]", 1))
