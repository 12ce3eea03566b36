"""``gnnca data templates``: the reaction templates fire where they should, every written reaction balances and is
atom-mapped well enough to train the bond-edit model, the screen removes what it lists, the output is
deterministic."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.algebra.rules.template_apply import (
    AMBIGUOUS,
    FORBIDDEN,
    apply_template,
    balance_reaction,
    captured,
)
from gnn_chemalgebra.algebra.rules.template_parts import POOLS, canonical
from gnn_chemalgebra.algebra.rules.templates import TEMPLATES
from gnn_chemalgebra.chem.composition import element_view, smiles_composition
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.data import templates as gen

BY_NAME = {t.name: t for t in TEMPLATES}

KNOWN = {  # template -> (substrate and partners, main product)
    "sn2_azide": (("CCCCBr", "[N-]=[N+]=[N-]"), "CCCCN=[N+]=[N-]"),
    "sn2_cyanide": (("CCCCBr", "[C-]#N"), "CCCCC#N"),
    "sn2_thiolate": (("CCCCI", "C[S-]"), "CCCCSC"),
    "sn2_alkoxide": (("CCCCBr", "C[O-]"), "CCCCOC"),
    "finkelstein": (("ClCc1ccccc1", "[I-]"), "ICc1ccccc1"),
    "amine_alkylation": (("CCCCBr", "C1CCNCC1"), "CCCCN1CCCCC1"),
    "e2_elimination": (("CC(C)(C)Br", "CC(C)(C)[O-]"), "C=C(C)C"),
    "e1_dehydration": (("CC(C)(C)O",), "C=C(C)C"),
    "e2_zaitsev": (("CCC(C)Br", "CC[O-]"), "CC=CC"),
    "hx_addition": (("C=CCCCC", "Br"), "CCCCC(C)Br"),
    "halogen_addition": (("C=Cc1ccccc1", "BrBr"), "BrCC(Br)c1ccccc1"),
    "alkene_hydration": (("C=C(C)CCC", "O"), "CCCC(C)(C)O"),
    "hydroboration_oxidation": (("C=Cc1ccccc1", "OO"), "OCCc1ccccc1"),
    "alkene_hydrogenation": (("C=CC(=O)OCC",), "CCC(=O)OCC"),
    "epoxidation": (("C=CCCCC", "O=C(OO)c1cccc(Cl)c1"), "CCCCC1CO1"),
    "dihydroxylation": (("C=CCCCC", "C[N+]1([O-])CCOCC1", "O"), "CCCCC(O)CO"),
    "ozonolysis": (("C=CCCCC", "[O-][O+]=O", "CSC"), "CCCCC=O"),
    "alkyne_hydrogenation": (("CCCCC#C",), "CCCCCC"),
    "swern_oxidation": (("OCc1ccccc1",), "O=Cc1ccccc1"),
    "dess_martin_oxidation": (("OCCc1ccccc1",), "O=CCc1ccccc1"),
    "pcc_oxidation": (("CCCCCO",), "CCCCC=O"),
    "jones_oxidation": (("OC1CCCCC1",), "O=C1CCCCC1"),
    "bleach_oxidation": (("CC(O)CCc1ccccc1",), "CC(=O)CCc1ccccc1"),
    "nabh4_reduction": (("CC(=O)c1ccccc1",), "CC(O)c1ccccc1"),
    "lialh4_ester_reduction": (("COC(=O)c1ccccc1",), "OCc1ccccc1"),
    "lialh4_amide_reduction": (("CC(=O)N(C)C",), "CCN(C)C"),
    "lialh4_nitrile_reduction": (("N#CCc1ccccc1",), "NCCc1ccccc1"),
    "grignard_addition": (("O=Cc1ccccc1", "C[Mg]Br", "O"), "CC(O)c1ccccc1"),
    "wittig": (("O=C1CCCCC1", "C=P(c1ccccc1)(c1ccccc1)c1ccccc1"), "C=C1CCCCC1"),
    "claisen_schmidt": (("O=Cc1ccccc1", "CC(=O)c1ccccc1"), "O=C(C=Cc1ccccc1)c1ccccc1"),
    "knoevenagel": (("O=Cc1ccccc1", "N#CCC#N"), "N#CC(C#N)=Cc1ccccc1"),
    "imine_formation": (("O=Cc1ccccc1", "CN"), "CN=Cc1ccccc1"),
    "reductive_amination": (("O=C1CCCCC1", "NCc1ccccc1"), "c1ccc(CNC2CCCCC2)cc1"),
    "acetal_formation": (("O=C1CCCCC1", "OCCO"), "C1CCC2(CC1)OCCO2"),
    "fischer_esterification": (("CC(=O)O", "CCO"), "CCOC(C)=O"),
    "carbodiimide_coupling": (("CC(=O)O", "NCc1ccccc1"), "CC(=O)NCc1ccccc1"),
    "acid_chloride_formation": (("O=C(O)c1ccccc1", "O=S(Cl)Cl"), "O=C(Cl)c1ccccc1"),
    "acyl_chloride_aminolysis": (("NCc1ccccc1", "CC(=O)Cl"), "CC(=O)NCc1ccccc1"),
    "acyl_chloride_alcoholysis": (("OC1CCCCC1", "CC(=O)Cl"), "CC(=O)OC1CCCCC1"),
    "anhydride_acylation": (("NCc1ccccc1", "CC(=O)OC(C)=O"), "CC(=O)NCc1ccccc1"),
    "sulfonamide_formation": (("CCN", "Cc1ccc(S(=O)(=O)Cl)cc1"), "CCNS(=O)(=O)c1ccc(C)cc1"),
    "sulfonate_formation": (("CCCCO", "CS(=O)(=O)Cl"), "CCCCOS(C)(=O)=O"),
    "saponification": (("COC(=O)c1ccccc1", "[OH-]"), "O=C([O-])c1ccccc1"),
    "ester_acid_hydrolysis": (("CCOC(C)=O", "O"), "CC(=O)O"),
    "tbu_ester_cleavage": (("CC(C)(C)OC(=O)Cc1ccccc1",), "O=C(O)Cc1ccccc1"),
    "amide_hydrolysis": (("CC(=O)NCc1ccccc1", "[OH-]"), "CC(=O)[O-]"),
    "nitrile_hydrolysis": (("CCC#N", "[OH-]", "O"), "CCC(=O)[O-]"),
    "ester_aminolysis": (("COC(=O)c1ccccc1", "CCN"), "CCNC(=O)c1ccccc1"),
    "aromatic_nitration": (("Cc1ccccc1", "O=[N+]([O-])O"), "Cc1ccc([N+](=O)[O-])cc1"),
    "aromatic_bromination": (("COc1ccccc1", "BrBr"), "COc1ccc(Br)cc1"),
    "friedel_crafts_acylation": (("COc1ccccc1", "CC(=O)Cl"), "COc1ccc(C(C)=O)cc1"),
    "nitro_reduction": (("COc1ccc([N+](=O)[O-])cc1",), "COc1ccc(N)cc1"),
    "azide_reduction": (("CCCCCN=[N+]=[N-]",), "CCCCCN"),
    "suzuki_coupling": (("Cc1ccc(Br)cc1", "OB(O)c1ccccc1", "[OH-]"), "Cc1ccc(-c2ccccc2)cc1"),
    "sonogashira_coupling": (("Ic1ccccc1", "C#Cc1ccccc1"), "c1ccc(C#Cc2ccccc2)cc1"),
    "heck_reaction": (("Ic1ccccc1", "C=CC(=O)OC"), "COC(=O)C=Cc1ccccc1"),
    "buchwald_hartwig": (("Brc1ccccc1", "C1COCCN1"), "c1ccc(N2CCOCC2)cc1"),
    "diels_alder": (("C=CC(=O)OC", "C=CC=C"), "COC(=O)C1CC=CCC1"),
    "urea_formation": (("CCN", "O=C=Nc1ccccc1"), "CCNC(=O)Nc1ccccc1"),
    "boc_protection": (("NCc1ccccc1", "CC(C)(C)OC(=O)OC(=O)OC(C)(C)C"), "CC(C)(C)OC(=O)NCc1ccccc1"),
    "boc_removal": (("CC(C)(C)OC(=O)N1CCCCC1",), "C1CCNCC1"),
    "cbz_protection": (("CCN", "O=C(Cl)OCc1ccccc1"), "CCNC(=O)OCc1ccccc1"),
    "cbz_removal": (("CCNC(=O)OCc1ccccc1",), "CCN"),
    "benzyl_protection": (("OC1CCCCC1", "BrCc1ccccc1"), "c1ccc(COC2CCCCC2)cc1"),
    "williamson_ether": (("Oc1ccccc1", "CI"), "COc1ccccc1"),
    "benzyl_removal": (("c1ccc(COC2CCCCC2)cc1",), "OC1CCCCC1"),
    "silyl_protection": (("OCc1ccccc1", "CC(C)(C)[Si](C)(C)Cl"), "CC(C)(C)[Si](C)(C)OCc1ccccc1"),
    "silyl_deprotection": (("CC(C)(C)[Si](C)(C)OC1CCCCC1", "[F-]"), "OC1CCCCC1"),
    "alcohol_to_bromide": (("CCCO", "Br"), "CCCBr"),
    "alcohol_to_chloride": (("CCCCO", "O=S(Cl)Cl"), "CCCCCl"),
    "hx_addition_trisubstituted": (("CC=C(C)CCc1ccccc1", "Br"), "CCC(C)(Br)CCc1ccccc1"),
    "alkene_hydration_trisubstituted": (("CC=C(C)CCc1ccccc1", "O"), "CCC(C)(O)CCc1ccccc1"),
    "sn1_substitution": (("CC(C)(C)O", "Cl"), "CC(C)(C)Cl"),
    "cyanohydrin_formation": (("O=Cc1ccccc1", "C#N"), "N#CC(O)c1ccccc1"),
    "carbonyl_hydrogenation": (("CC(=O)c1ccccc1",), "CC(O)c1ccccc1"),
    "wolff_kishner": (("CC(=O)c1ccccc1",), "CCc1ccccc1"),
    "clemmensen": (("CCCC(=O)c1ccccc1",), "CCCCc1ccccc1"),
    "alkyne_hydration": (("C#CCCCC", "O"), "CCCCC(C)=O"),
    "enamine_formation": (("O=C1CCCCC1", "C1CCNC1"), "C1=C(N2CCCC2)CCCC1"),
    "acetal_hydrolysis": (("C1CCC2(CC1)OCCO2", "O"), "O=C1CCCCC1"),
    "epoxide_opening": (("C1CO1", "NCc1ccccc1"), "OCCNCc1ccccc1"),
    "michael_addition": (("C1CCNCC1", "C=CC(=O)OC"), "COC(=O)CCN1CCCCC1"),
    "friedel_crafts_alkylation": (("COc1ccccc1", "CC(C)(C)Cl"), "COc1ccc(C(C)(C)C)cc1"),
    "grignard_formation": (("Brc1ccccc1", "[Mg]"), "Br[Mg]c1ccccc1"),
    "cuaac": (("C#Cc1ccccc1", "[N-]=[N+]=NCc1ccccc1"), "c1ccc(Cn2cc(-c3ccccc3)nn2)cc1"),
}


def _sides_balance(coefs: dict[str, int], reactants: list[str], made: list[str]) -> bool:
    total: Counter = Counter()
    for sign, mols in ((1, reactants), (-1, made)):
        for m in mols:
            for k, v in element_view(smiles_composition(m)).items():
                total[k] += sign * coefs[m] * v
    return not any(total.values())


@pytest.mark.unit
def test_the_library_is_large_and_every_template_is_checked() -> None:
    assert len(TEMPLATES) >= 30 and len({t.cls for t in TEMPLATES}) >= 30
    assert len(BY_NAME) == len(TEMPLATES), "template names are unique"
    assert set(KNOWN) == set(BY_NAME), "every template has a known case here"
    for t in TEMPLATES:
        assert all(p in POOLS for p in t.partners), t.name


@pytest.mark.unit
@pytest.mark.parametrize("name", sorted(KNOWN))
def test_a_template_gives_the_textbook_product_and_every_variant_balances(name: str) -> None:
    mols, expected = KNOWN[name]
    applied = apply_template(BY_NAME[name], [canonical(m) for m in mols])
    assert not isinstance(applied, str), applied
    assert applied.main == canonical(expected)
    for variant in BY_NAME[name].variants:
        w = balance_reaction(applied, variant, solvent="CCO")
        assert w is not None, variant
        assert _sides_balance(w.coefficients, list(w.reactants), [w.product, *w.byproducts])
        assert all(c > 0 for c in w.coefficients.values())
        assert not set(w.reagents) & set(w.coefficients), "a reagent is neither consumed nor made"


@pytest.mark.unit
def test_a_template_refuses_two_sites_and_forbidden_groups() -> None:
    two_esters = "CCOC(=O)CCC(=O)OC"  # saponification could hit either ester
    assert apply_template(BY_NAME["saponification"], [two_esters, "[OH-]"]) == AMBIGUOUS
    acidic = "OCCC(=O)c1ccccc1"  # a Grignard reagent would take the alcohol's proton
    assert apply_template(BY_NAME["grignard_addition"], [acidic, "C[Mg]Br", "O"]) == FORBIDDEN
    # a symmetric substrate: two matches, one product
    assert not isinstance(apply_template(BY_NAME["nabh4_reduction"], ["O=C1CCCCC1"]), str)


@pytest.mark.unit
def test_eliminations_pick_zaitsev_or_hofmann_where_a_substrate_has_two_sides() -> None:
    assert apply_template(BY_NAME["e2_zaitsev"], ["CC(C)C(C)Br", "CC[O-]"]).main == "CC=C(C)C"
    assert apply_template(BY_NAME["e2_elimination"], ["CCC(C)Br", "CC(C)(C)[O-]"]).main == "C=CCC"
    assert apply_template(BY_NAME["e1_dehydration"], ["CCC(C)(O)CC"]).main == "CC=C(C)CC"
    # without a rule, two sides are two sites: skipped
    assert apply_template(BY_NAME["hx_addition"], ["C=CCCC(C)=C", "Br"]) == AMBIGUOUS


@pytest.mark.unit
def test_a_base_takes_up_the_hydrogen_halide() -> None:
    assert captured(["Cl", "O=S=O"], "CCN(CC)CC") == (["CC[NH+](CC)CC", "[Cl-]", "O=S=O"], ["CCN(CC)CC"])
    assert captured(["Cl"], None) == (["Cl"], [])
    t = BY_NAME["acyl_chloride_aminolysis"]
    applied = apply_template(t, ["NCc1ccccc1", "CC(=O)Cl"])
    w = balance_reaction(applied, t.variants[1])
    assert w is not None and set(w.byproducts) == {"CC[NH+](CC)CC", "[Cl-]"} and "CCN(CC)CC" in w.reactants


@pytest.mark.unit
def test_hydride_reductions_have_their_textbook_stoichiometry() -> None:
    t = BY_NAME["nabh4_reduction"]
    w = balance_reaction(apply_template(t, ["CC(C)=O"]), t.variants[0])
    assert w.coefficients == {"CC(C)=O": 4, "[BH4-]": 1, "O": 4, "CC(C)O": 4, "O[B-](O)(O)O": 1}
    assert w.reagents == ("[Na+]",)
    t = BY_NAME["lialh4_ester_reduction"]
    w = balance_reaction(apply_template(t, ["COC(=O)c1ccccc1"]), t.variants[0])
    assert w.coefficients["COC(=O)c1ccccc1"] == 2 and w.coefficients["[AlH4-]"] == 1 and w.coefficients["CO"] == 2


def _run_generate(pool: list[str], screens: dict[str, set[str]], name: str, n: int = 50, seed: int = 0):
    gen._init(pool, screens)
    return gen.generate((name, n, seed, 1))


@pytest.mark.unit
def test_the_screen_removes_a_listed_product_and_counts_it() -> None:
    from rdkit import Chem

    from gnn_chemalgebra.data.extra import product_key

    pool = ["CCCCCCBr", "BrCCCc1ccccc1"]
    _, recs, counts = _run_generate(pool, {}, "sn2_azide")
    assert {r["products"][0] for r in recs} == {"CCCCCCN=[N+]=[N-]", "[N-]=[N+]=NCCCc1ccccc1"}
    key = product_key(Chem.MolFromSmiles("CCCCCCN=[N+]=[N-]"))
    _, recs, counts = _run_generate(pool, {"test_set": {key}}, "sn2_azide")
    assert [r["products"][0] for r in recs] == ["[N-]=[N+]=NCCCc1ccccc1"]
    assert counts["screened_out"] == {"test_set": 1} and counts["written"] == 1 and counts["balanced"] == 2
    # a side product that carries the substrate's skeleton is screened too (the amine of a hydrolysed amide)
    amine = product_key(Chem.MolFromSmiles("NCc1ccc(Cl)cc1"))
    _, recs, counts = _run_generate(["CC(=O)NCc1ccc(Cl)cc1"], {"test_set": {amine}}, "amide_hydrolysis")
    assert recs == [] and counts["screened_out"] == {"test_set": 1}
    _, recs, counts = _run_generate(["CC(=O)NCc1ccc(Cl)cc1"], {}, "amide_hydrolysis")
    assert recs[0]["byproducts"] == ["NCc1ccc(Cl)cc1"]


def _pool() -> list[str]:
    return sorted(canonical(m) for m in {m for mols, _ in KNOWN.values() for m in mols[:1]} | {
        "CCCCCCBr", "CCCCBr", "BrCCCc1ccccc1", "COC(=O)c1ccc(C)cc1", "CCOC(=O)CCc1ccccc1", "OCCCc1ccccc1",
        "O=Cc1ccc(F)cc1", "CC(=O)c1ccc(Br)cc1", "O=C(O)CCc1ccccc1", "NCCc1ccccc1", "C=CCCCCCC", "Brc1ccc(F)cc1",
    })  # fmt: skip


@pytest.mark.unit
def test_generation_is_deterministic_for_a_seed_and_every_record_balances() -> None:
    pool = _pool()
    runs = [[_run_generate(pool, {}, t.name, 3, seed) for t in TEMPLATES] for seed in (0, 0, 1)]
    assert runs[0] == runs[1]
    records = [r for _, recs, _ in runs[0] for r in recs]
    assert len(records) >= 80
    for r in records:
        assert _sides_balance(r["coefficients"], r["reactants"], r["products"] + r["byproducts"]), r
        assert r["source"]["set"] == "templates" and r["mapped"]


@pytest.mark.unit
def test_most_records_build_edit_examples() -> None:
    from gnn_chemalgebra.data.edit_dataset import build_examples

    pool = _pool()
    records = [r for t in TEMPLATES for r in _run_generate(pool, {}, t.name, 3)[1]]
    for k, r in enumerate(records):
        r["id"] = k
    examples, kept, skipped = build_examples(records)
    assert len(kept) >= 0.95 * len(records), skipped
    # every example's labels change at least one bond (the product is not the reactant graph unchanged)
    assert all(bool((ex.pair_y != ex.pair_cur).any()) for ex in examples)


def _fake_build(tmp_path: Path) -> Path:
    """A build folder of a few training molecules, with sources whose test split holds one product the
    templates would make (screened out)."""
    src, built = tmp_path / "src", tmp_path / "built"
    for sub in ("uspto_mit_mapped", "uspto_mit_tgt"):
        (src / sub).mkdir(parents=True)
    for split in ("valid", "test"):
        target = "CCCCCCCCCCN=[N+]=[N-]" if split == "test" else "CCO"
        (src / "uspto_mit_mapped" / f"{split}.txt").write_text("[CH3:1][OH:2]>>[CH3:1][OH:2] 1-2\n")
        (src / "uspto_mit_tgt" / f"tgt-{split}.txt").write_text(" ".join(target) + "\n")
    (built / "uspto_bal").mkdir(parents=True)
    (built / "manifest.json").write_text(json.dumps({"tool": "gnnca data build", "source": str(src)}))
    train = [
        {"id": 0, "reactants": ["CCCCCCCCCCBr", "CCO"], "reagents": ["O"], "products": ["BrCCCCc1ccc(Cl)cc1"]},
        {"id": 1, "reactants": ["COC(=O)c1ccc(C(F)(F)F)cc1", "O"], "reagents": [], "products": ["NCCc1ccc(Cl)cc1"]},
    ]
    (built / "uspto_bal" / "reactions-train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in train))
    for split in ("valid", "test"):
        rec = {"id": 0, "reactants": ["CCCCCCCCCCCCBr"], "reagents": [], "products": ["CCCCCCCCCCCCO"]}
        (built / "uspto_bal" / f"reactions-{split}.jsonl").write_text(json.dumps(rec) + "\n")
    return built


@pytest.mark.integration
def test_the_command_writes_a_training_folder_deterministically(tmp_path: Path) -> None:
    built = _fake_build(tmp_path)
    args = ["data", "templates", str(built), "--per-class", "300", "--workers", "1"]
    args += ["--template", "sn2_azide", "--template", "saponification", "--template", "boc_protection"]
    args += ["--template", "boc_removal"]
    manifests = []
    for out in ("a", "b"):
        res = CliRunner().invoke(app, [*args, "--out", str(tmp_path / out)])
        assert res.exit_code == 0, res.output
        manifests.append(json.loads((tmp_path / out / "manifest.json").read_text()))
    assert manifests[0]["files"] == manifests[1]["files"]
    counts = manifests[0]["counts"]
    assert counts["templates"]["sn2_azide"]["screened_out"].get("uspto_mit_valid_test") == 1  # the decyl azide
    assert counts["classes"]["SN2"]["written"] == counts["templates"]["sn2_azide"]["written"] > 0
    recs = [json.loads(x) for x in (tmp_path / "a" / "reactions-train.jsonl").read_text().splitlines()]
    made = {r["products"][0] for r in recs}
    assert "[N-]=[N+]=NCCCCc1ccc(Cl)cc1" in made and "CCCCCCCCCCN=[N+]=[N-]" not in made
    assert "O=C([O-])c1ccc(C(F)(F)F)cc1" in made and "NCCc1ccc(Cl)cc1" in made
    # no Boc group among the training molecules: the Boc removals come from the first round's Boc protections
    removals = [r for r in recs if r["source"]["template"] == "boc_removal"]
    assert removals and all(r["source"]["round"] == 2 for r in removals)
    assert counts["templates"]["boc_removal"]["written_round2"] == len(removals)
    assert "CC(C)(C)OC(=O)NCCc1ccc(Cl)cc1" in {r["reactants"][0] for r in removals}
    assert [r["id"] for r in recs] == list(range(len(recs))) and all(r["mapped"] for r in recs)
    assert counts["total"]["written"] == len(recs) == counts["lines"]["ChemAlgebra_S_T1_x1"]
    src = (tmp_path / "a" / "ChemAlgebra_S_T1_x1" / "src-train.txt").read_text().splitlines()
    assert any("[Na+]" in s and "[N-]=[N+]=[N-]" in s for s in src)
    assert manifests[0]["files"]["ChemAlgebra_S_T2_x1/src-train.txt"]["lines"] == 2 * len(recs)


@pytest.mark.integration
def test_the_command_refuses_an_unknown_template_in_one_line(tmp_path: Path) -> None:
    built = _fake_build(tmp_path)
    res = CliRunner().invoke(app, ["data", "templates", str(built), "--out", str(tmp_path / "o"), "--template", "x"])
    assert res.exit_code == 2 and "unknown template 'x'" in res.output and "Traceback" not in res.output
