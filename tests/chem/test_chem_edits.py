"""Gold bond-edit labels: extraction from atom-mapped SMILES, exact re-application, the leftover-chain rule."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from rdkit import Chem

from gnn_chemalgebra.chem.edits import (
    AROMATIC,
    CAUSE_H_COUNT,
    CAUSE_PRODUCT_MATCH,
    CAUSE_REACTANT_MATCH,
    CAUSE_SANITIZE,
    CAUSE_STEREO,
    NONE,
    SINGLE,
    EditLabelError,
    EditLabels,
    apply_edits,
    apply_edits_components,
    candidate_pairs,
    check_record,
    diagnose,
    extract_labels,
    gold_products,
    labels_for_record,
)
from gnn_chemalgebra.chem.leftover import (
    leftover_composition,
    leftover_fixed_order,
    leftover_from_composition,
    leftover_sorted_reactants,
)

pytestmark = pytest.mark.unit

AMIDE = "[CH3:1][C:2](=[O:3])[Cl:4].[NH3:5]>>[CH3:1][C:2](=[O:3])[NH2:5]"

# Three records of the built USPTO-BAL (local protocol, MIT valid 0, 1, 4): a sulfinate whose mapped product
# carries a spectator [Na+] and whose reactants include the artificial leftover [O-]; an SNAr; an esterification.
REAL_RECORDS = [
    {
        "reactants": ["COc1ccc(S(=O)(=O)Cl)cc1", "[Na+]", "[O-]"],
        "products": ["COc1ccc(S(=O)[O-])cc1", "[O][Cl]->[Na+]"],
        "leftover_product": "[O][Cl]->[Na+]",
        "mapped": "[CH3:15][C:16](=[O:17])[CH3:18].[CH3:3][O:4][c:5]1[cH:6][cH:7][c:8]([S:11](=[O:12])"
        "(=[O:13])[Cl:14])[cH:9][cH:10]1.[I-:1].[Na+:2]>>[CH3:3][O:4][c:5]1[cH:6][cH:7][c:8]([S:11]"
        "(=[O:12])[O-:13])[cH:9][cH:10]1.[Na+:2]",
        "edits": "11-14;11-13",
    },
    {
        "reactants": ["N#Cc1c(N)nc(Cl)c(C#N)c1-c1ccccc1", "OCc1ccccn1"],
        "products": ["N#Cc1c(N)nc(OCc2ccccn2)c(C#N)c1-c1ccccc1", "Cl"],
        "leftover_product": "Cl",
        "mapped": "[CH3:19][C:20]([CH3:21])([O-:22])[CH3:23].[K+:24].[NH2:1][c:2]1[n:3][c:4]([Cl:18])"
        "[c:5]([C:16]#[N:17])[c:6](-[c:10]2[cH:11][cH:12][cH:13][cH:14][cH:15]2)[c:7]1[C:8]#[N:9]."
        "[OH:25][CH2:26][c:27]1[n:28][cH:29][cH:30][cH:31][cH:32]1>>[NH2:1][c:2]1[n:3][c:4]([O:25]"
        "[CH2:26][c:27]2[n:28][cH:29][cH:30][cH:31][cH:32]2)[c:5]([C:16]#[N:17])[c:6](-[c:10]2[cH:11]"
        "[cH:12][cH:13][cH:14][cH:15]2)[c:7]1[C:8]#[N:9]",
        "edits": "4-18;4-25",
    },
    {
        "reactants": ["O=C(Cl)c1ccccc1", "CCC12CCC3C4CCC(=O)C=C4CCC3C1C(O)CC2=O"],
        "products": ["CCC12CCC3C4CCC(=O)C=C4CCC3C1C(OC(=O)c1ccccc1)CC2=O", "Cl"],
        "leftover_product": "Cl",
        "mapped": "[C:1]([c:2]1[cH:3][cH:4][cH:5][cH:6][cH:7]1)(=[O:8])[Cl:9].[CH2:39]([Cl:40])[Cl:41]."
        "[OH2:32].[OH:10][CH:11]1[CH2:12][C:13](=[O:31])[C:14]2([CH2:15][CH3:16])[CH:17]1[CH:18]1[CH2:19]"
        "[CH2:20][C:21]3=[CH:22][C:23](=[O:30])[CH2:24][CH2:25][CH:26]3[CH:27]1[CH2:28][CH2:29]2."
        "[cH:33]1[cH:34][cH:35][n:36][cH:37][cH:38]1>>[C:1]([c:2]1[cH:3][cH:4][cH:5][cH:6][cH:7]1)"
        "(=[O:8])[O:10][CH:11]1[CH2:12][C:13](=[O:31])[C:14]2([CH2:15][CH3:16])[CH:17]1[CH:18]1[CH2:19]"
        "[CH2:20][C:21]3=[CH:22][C:23](=[O:30])[CH2:24][CH2:25][CH:26]3[CH:27]1[CH2:28][CH2:29]2",
        "edits": "1-10;1-9",
    },
]


def _unmapped(smiles: str) -> str:
    mol = Chem.MolFromSmiles(smiles)
    for a in mol.GetAtoms():
        a.SetAtomMapNum(0)
    return Chem.MolToSmiles(mol)


def _sides(mapped: str) -> tuple[list[str], list[str]]:
    lhs, rhs = mapped.split(">>")
    return [_unmapped(f) for f in lhs.split(".")], [_unmapped(f) for f in rhs.split(".")]


def test_amide_coupling_labels() -> None:
    labels = extract_labels(AMIDE, ["CC(=O)Cl", "N"], ["CC(N)=O"])
    # CC(=O)Cl reads C0 C1 O2 Cl3, then N is atom 4.
    assert labels.bonds == [(1, 3, NONE), (1, 4, SINGLE)]
    assert labels.h_delta == {4: -1, 3: +1}  # N gives a hydrogen; the leaving Cl is capped (HCl)
    assert labels.charge_delta == {}
    assert labels.product_atoms == [0, 1, 2, 4]
    assert labels.maps == [1, 2, 3, 4, 5]
    assert labels.key(4) == (1, 0)
    assert apply_edits_components(["CC(=O)Cl", "N"], labels) == [("CC(N)=O", True), ("Cl", False)]


def test_labels_follow_the_reactant_list_order() -> None:
    labels = extract_labels(AMIDE, ["N", "CC(=O)Cl"], ["CC(N)=O"])
    assert labels.bonds == [(0, 2, SINGLE), (2, 4, NONE)]
    assert labels.h_delta == {0: -1, 4: +1}
    assert apply_edits(["N", "CC(=O)Cl"], labels) == ["CC(N)=O"]


def test_json_round_trip_and_dense_pairs() -> None:
    labels = extract_labels(AMIDE, ["CC(=O)Cl", "N"], ["CC(N)=O"])
    again = EditLabels.from_json(json.loads(json.dumps(labels.to_json())))
    assert again == labels
    dense = candidate_pairs(["CC(=O)Cl", "N"], labels)
    assert dense == [(0, 1, SINGLE), (1, 2, 2), (1, 3, NONE), (1, 4, SINGLE)]


@pytest.mark.parametrize("record", REAL_RECORDS, ids=["sulfinate", "snar", "ester"])
def test_real_records_round_trip(record: dict) -> None:
    cause, labels = check_record(record)
    assert cause == ""
    assert labels is not None
    ours = {frozenset((labels.maps[i], labels.maps[j])) for i, j, _ in labels.bonds}
    rexgen = {frozenset(map(int, e.split("-"))) for e in record["edits"].split(";")}
    assert ours == rexgen


def test_spectator_ion_is_not_a_product() -> None:
    record = REAL_RECORDS[0]
    labels = labels_for_record(record)
    comps = dict(apply_edits_components(record["reactants"], labels))
    assert comps["[Na+]"] is False  # mapped into the product side, but the MIT target omits it
    assert labels.n_atoms[-1] == 1 and labels.maps[-1] == 0  # the artificial [O-] is never touched
    assert apply_edits(record["reactants"], labels) == ["COc1ccc(S(=O)[O-])cc1"]


def test_bundled_reactions_round_trip() -> None:
    from gnn_chemalgebra.data.build import bundled_data_dir
    from gnn_chemalgebra.data.uspto import process_reaction, read_split

    records = [process_reaction(raw) for raw in read_split(bundled_data_dir(), "valid", limit=60)]
    kept = [r for r in records if r["ok"]]
    assert len(kept) >= 20
    assert Counter(check_record(r)[0] for r in kept) == Counter({"": len(kept)})


def test_aromatic_leaving_group_is_capped() -> None:
    # A triazole leaves an aromatic carbon: without an H on the triazole N it could not be kekulised.
    mapped = (
        "[CH3:1][c:2]1[cH:3][n:4][c:5](=[O:6])[nH:7][c:8]1-[n:9]1[cH:10][n:11][cH:12][n:13]1"
        ">>[CH3:1][c:2]1[cH:3][n:4][c:5](=[O:6])[nH:7][cH:8]1"
    )
    reactants, products = _sides(mapped)
    labels = extract_labels(mapped, reactants, products)
    comps = apply_edits_components(reactants, labels)
    assert sorted(s for s, p in comps if p) == sorted(products)
    assert sorted(s for s, p in comps if not p) == ["c1nc[nH]n1"]


@pytest.mark.parametrize("tag", ["@", "@@"])
def test_tetrahedral_stereo_is_labelled(tag: str) -> None:
    mapped = f"[CH3:1][C@@H:2]([Br:3])[CH2:4][CH3:5].[OH-:6]>>[CH3:1][C{tag}H:2]([OH:6])[CH2:4][CH3:5]"
    reactants, products = _sides(mapped)
    labels = extract_labels(mapped, reactants, products)
    assert labels.charge_delta == {labels.maps.index(6): 1}
    assert apply_edits(reactants, labels) == products
    assert diagnose(apply_edits(reactants, labels, stereo=False), products) == CAUSE_STEREO


@pytest.mark.parametrize("bond", ["/", "\\"])
def test_double_bond_stereo_is_labelled(bond: str) -> None:
    mapped = f"[Br:1]/[CH:2]=[CH:3]/[CH3:4].[CH3:5][O-:6]>>[CH3:5][O:6]/[CH:2]=[CH:3]{bond}[CH3:4]"
    reactants, products = _sides(mapped)
    labels = extract_labels(mapped, reactants, products)
    assert len(labels.bond_stereo) == 1
    assert apply_edits(reactants, labels) == products


def test_stereo_loss_away_from_the_centre() -> None:
    mapped = "[CH3:1][C@H:2]([OH:3])[CH2:4][Cl:5].[NH3:6]>>[CH3:1][CH:2]([OH:3])[CH2:4][NH2:6]"
    reactants, products = _sides(mapped)
    labels = extract_labels(mapped, reactants, products)
    assert list(labels.chiral.values()) == [0]
    assert apply_edits(reactants, labels) == products


def test_diagnosis_and_errors() -> None:
    labels = extract_labels(AMIDE, ["CC(=O)Cl", "N"], ["CC(N)=O"])
    wrong_h = EditLabels.from_json({**labels.to_json(), "h_delta": [[3, 1], [4, -2]]})
    assert diagnose(apply_edits(["CC(=O)Cl", "N"], wrong_h), ["CC(N)=O"]) == CAUSE_H_COUNT
    with pytest.raises(EditLabelError) as err:
        extract_labels(AMIDE, ["CC(=O)Br", "N"], ["CC(N)=O"])
    assert err.value.cause == CAUSE_REACTANT_MATCH
    with pytest.raises(EditLabelError) as err:
        extract_labels(AMIDE, ["CC(=O)Cl", "N"], ["CC(O)=O"])
    assert err.value.cause == CAUSE_PRODUCT_MATCH
    broken = EditLabels.from_json({**labels.to_json(), "bonds": [[0, 4, AROMATIC]]})
    with pytest.raises(EditLabelError) as err:
        apply_edits(["CC(=O)Cl", "N"], broken)
    assert err.value.cause == CAUSE_SANITIZE


def test_labels_without_product_atoms_return_touched_components() -> None:
    labels = extract_labels(AMIDE, ["CC(=O)Cl", "N"], ["CC(N)=O"])
    bare = EditLabels.from_json({**labels.to_json(), "product_atoms": []})
    assert apply_edits(["CC(=O)Cl", "N"], bare) == ["CC(N)=O", "Cl"]


def test_leftover_rules_on_a_known_example() -> None:
    # Builder: reactants in original order COc1..Cl, [Na+] (+ leftover [O-]) -> chain O, Cl, Na+.
    record = REAL_RECORDS[0]
    shuffled = ["[O-]", "[Na+]", "COc1ccc(S(=O)(=O)Cl)cc1"]
    products = gold_products(record)
    assert leftover_composition(shuffled, products) == Counter({"O": 1, "Cl": 1, "Na+": 1})
    assert leftover_from_composition(shuffled, products) == record["leftover_product"]
    assert leftover_sorted_reactants(shuffled, products) == record["leftover_product"]
    assert leftover_fixed_order(shuffled, products) == "[O][Na+][Cl]"  # the Hill-like rule gets it wrong
