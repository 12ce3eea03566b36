"""The organic rules: reaction SMARTS that fire only when the line names their reagents and one reacting site,
and write the products with the real by-products (HCl or the base's hydrochloride, water, the urea, the acid)."""

from __future__ import annotations

from collections import Counter

import pytest

from gnn_chemalgebra.algebra.rules import apply_rules
from gnn_chemalgebra.chem.bag import parse_bag
from gnn_chemalgebra.chem.molecule import canonical

pytestmark = pytest.mark.unit


def _bag(text: str) -> Counter:
    return Counter({canonical(t.mol, "smiles"): t.coef for t in parse_bag(text, default_coef=1)})


@pytest.mark.parametrize(
    ("line", "rule", "expected"),
    [
        ("CCC(=O)Cl.NC1CCCCC1", "acyl_substitution", "{1}CCC(=O)NC1CCCCC1.{1}Cl"),
        ("CCC(=O)Cl.CCCO.CCN(CC)CC", "acyl_substitution", "{1}CCCOC(=O)CC.{1}CC[NH+](CC)CC.{1}[Cl-]"),
        ("CS(=O)(=O)Cl.OCC1CCCC1.c1ccncc1", "acyl_substitution", "{1}CS(=O)(=O)OCC1CCCC1.{1}c1cc[nH+]cc1.{1}[Cl-]"),
        ("O=C(Cl)OCc1ccccc1.NCCC", "acyl_substitution", "{1}CCCNC(=O)OCc1ccccc1.{1}Cl"),
        ("CCC(=O)OC(=O)CC.Oc1ccccc1", "acyl_substitution", "{1}CCC(=O)Oc1ccccc1.{1}CCC(=O)O"),
        (
            "O=C(O)c1ccccc1.NCCC.CC(C)N=C=NC(C)C",
            "carbodiimide_coupling",
            "{1}CCCNC(=O)c1ccccc1.{1}CC(C)NC(=O)NC(C)C",
        ),
        ("CCC(=O)O.CCCCO.O=S(=O)(O)O", "fischer_esterification", "{1}CCCCOC(=O)CC.{1}O.{1}O=S(=O)(O)O"),
        ("CCCC(=O)OC.[K+].[OH-]", "saponification", "{1}CCCC(=O)[O-].{1}[K+].{1}CO"),
        ("CCCC(=O)OCC.O[Na]", "saponification", "{1}CCCC(=O)O[Na].{1}CCO"),
        ("CC(=O)OCCOC(C)=O.{2}[Na+].{2}[OH-]", "saponification", "{2}CC(=O)[O-].{2}[Na+].{1}OCCO"),
        ("CCCC(=O)O.O=S(Cl)Cl", "acid_chloride_formation", "{1}CCCC(=O)Cl.{1}O=S=O.{1}Cl"),
        (
            "CC(C)(C)OC(=O)OC(=O)OC(C)(C)C.NC1CCCC1",
            "boc_protection",
            "{1}CC(C)(C)OC(=O)NC1CCCC1.{1}CC(C)(C)O.{1}O=C=O",
        ),
        ("CCC=CCC.ClCl", "halogen_addition", "{1}CCC(Cl)C(Cl)CC"),
        ("C=CCCO.O=C(OO)c1cccc(Cl)c1", "epoxidation", "{1}OCCC1CO1.{1}O=C(O)c1cccc(Cl)c1"),
        ("C=CCC(=O)OC.[H][H].[Pd]", "hydrogenation", "{1}CCCC(=O)OC.{1}[Pd]"),
        ("O=[N+]([O-])c1ccc(C)cc1.{3}[H][H]", "hydrogenation", "{1}Nc1ccc(C)cc1.{2}O"),
        ("[N-]=[N+]=NCCc1ccccc1.[H][H]", "hydrogenation", "{1}NCCc1ccccc1.{1}N#N"),
        ("CC(C)(C)OC(=O)NCCc1ccccc1.Cl", "boc_removal", "{1}[NH3+]CCc1ccccc1.{1}[Cl-].{1}C=C(C)C.{1}O=C=O"),
    ],
)
def test_organic_rule_writes_the_line(line: str, rule: str, expected: str) -> None:
    got = apply_rules(parse_bag(line, default_coef=1), "smiles")
    assert got is not None, line
    assert got.rule == rule
    assert _bag(got.line) == _bag(expected)


@pytest.mark.parametrize(
    "line",
    [
        "CCC(=O)O.NC1CCCCC1",  # acid + amine, no coupling agent: a salt cold, an amide hot
        "CCC(=O)O.CCCCO",  # acid + alcohol, no catalyst: left to the model
        "CCC(=O)Cl.NCCO",  # an amino alcohol: two sites
        "CCC(=O)Cl.NCCC.ClCCl",  # a solvent the rule does not name
        "CCC(=O)O.CC(C)(C)O.O=S(=O)(O)O",  # a tertiary alcohol eliminates under acid
        "O=C1CCCCO1.[Na+].[OH-]",  # a lactone: not written by the rule
        "CC(=O)OC(=O)CC.NCCC",  # a mixed anhydride: two outcomes
        "c1ccccc1.CC(=O)Cl",  # Friedel-Crafts needs its Lewis acid: no nucleophile, no rule
        "C=CC=C.BrBr",  # two C=C: 1,2- or 1,4-addition
        "C#CCC=C.[H][H]",  # an alkyne beside the alkene: which is reduced depends on the catalyst
        "C=CCOCc1ccccc1.[H][H].[Pd]",  # a benzyl ether: hydrogenolysis may cleave it too
        "CC=CC(C)=O.O=C(OO)c1cccc(Cl)c1",  # an enone: the peracid may give a Baeyer-Villiger ester instead
        "CC(C)(C)OC(=O)NCCNC(=O)OC(C)(C)C.Cl",  # two Boc groups: one or both removed is not written
    ],
)
def test_no_organic_rule_fires(line: str) -> None:
    assert apply_rules(parse_bag(line, default_coef=1), "smiles") is None
