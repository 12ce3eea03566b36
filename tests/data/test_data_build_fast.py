"""The builder's fast path (string-keyed caches, compositions read from the SMILES, forked chunks) against a
plain RDKit oracle: every fragment parsed with its maps, canonicalised, re-read, hydrogens added."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from rdkit import Chem
from rdkit.Chem import rdMolDescriptors

from gnn_chemalgebra.chem.composition import mol_composition
from gnn_chemalgebra.chem.leftover import leftover_molecule
from gnn_chemalgebra.data import uspto
from gnn_chemalgebra.data.build import _process_all, bundled_data_dir

pytestmark = pytest.mark.unit

TRICKY = [
    "[H][H]",
    "[2H]C([2H])([2H])O",
    "[NH4+]",
    "[H+]",
    "[H-]",
    "C[H]",
    "[O-][H]",
    "[CH3]",
    "[Fe+3]",
    "[Fe++]",
    "[Cl-]",
    "CC(=O)[O-].[Na+]",
    "O=[N+]([O-])c1ccccc1",
    "[BH4-]",
    "C[Si](C)(C)Cl",
    "c1ccncc1",
    "c1cc[se]c1",
    "[Pd]",
    "*C(=O)Br",
    "[13CH3][C@@H](N)C(=O)O",
    "C/C=C/[N-][S+2]",
    "C1CC2CC3CC4CC5CC6CC7CC8CC9CC%10CC%11CC1C2C3C4C5C6C7C8C9C%10%11",
    "[CH3:4][c:5]1[cH:6][n:7][cH:8][nH:9]1",
]


def _oracle_canonical(frag: str) -> tuple[str, Chem.Mol] | None:
    mol = Chem.MolFromSmiles(frag)
    if mol is None:
        return None
    for atom in mol.GetAtoms():
        atom.SetAtomMapNum(0)
    can = Chem.MolToSmiles(mol)
    again = Chem.MolFromSmiles(can)
    return None if again is None else (can, again)


def _oracle(raw: uspto.RawReaction) -> dict[str, Any]:
    """The USPTO-BAL rules written the slow way (one RDKit round trip per fragment, AddHs compositions)."""
    base: dict[str, Any] = {"mit_index": raw.index}
    if ">>" not in raw.mapped:
        return {**base, "ok": False, "reason": uspto.SKIP_MALFORMED, "detail": "no '>>' in the reaction SMILES"}
    lhs, rhs = raw.mapped.split(">>", 1)
    product_maps = set(uspto.ATOM_MAP.findall(rhs))
    sides: dict[str, list[tuple[str, Chem.Mol]]] = {"r": [], "g": [], "p": []}
    for frag in lhs.split("."):
        got = _oracle_canonical(frag)
        if got is None:
            return {**base, "ok": False, "reason": uspto.SKIP_UNPARSABLE_REACTANTS, "detail": frag}
        sides["r" if product_maps & set(uspto.ATOM_MAP.findall(frag)) else "g"].append(got)
    if not sides["r"]:
        return {**base, "ok": False, "reason": uspto.SKIP_NO_REACTANT, "detail": "no fragment maps into the product"}
    for frag in raw.target.split("."):
        got = _oracle_canonical(frag)
        if got is None:
            return {**base, "ok": False, "reason": uspto.SKIP_UNPARSABLE_PRODUCT, "detail": frag}
        sides["p"].append(got)
    reactants, reagents, products = ([s for s, _ in sides[k]] for k in "rgp")
    base["separated_src"] = ".".join(reactants) + ">" + ".".join(reagents)
    base["separated_tgt"] = ".".join(products)

    def side(mols: list[Chem.Mol]) -> Counter:
        total: Counter = Counter()
        for m in mols:
            total.update(mol_composition(m))
        return total

    r_mols, p_mols = [m for _, m in sides["r"]], [m for _, m in sides["p"]]
    status, left_p, left_r = "balanced", None, None
    if side(r_mols) != side(p_mols):
        status = "rebalanced"
        extra_r, extra_p = side(r_mols) - side(p_mols), side(p_mols) - side(r_mols)
        for extra, where in ((extra_r, "product-side chain"), (extra_p, "reactant-side chain")):
            if not extra:
                continue
            chain = leftover_molecule(extra)
            if chain is None:
                return {**base, "ok": False, "reason": uspto.SKIP_LEFTOVER_REJECTED, "detail": where}
            if where.startswith("product"):
                left_p = chain
            else:
                left_r = chain
        if left_p is not None:
            products.append(left_p)
            p_mols.append(Chem.MolFromSmiles(left_p))
        if left_r is not None:
            reactants.append(left_r)
            r_mols.append(Chem.MolFromSmiles(left_r))
        if side(r_mols) != side(p_mols):
            return {**base, "ok": False, "reason": uspto.SKIP_RECHECK, "detail": ""}
    order = dict.fromkeys((*reactants, *reagents, *products))
    formulas = {s: rdMolDescriptors.CalcMolFormula(Chem.MolFromSmiles(s)) for s in order}
    return {
        **base,
        "ok": True,
        "status": status,
        "reactants": reactants,
        "reagents": reagents,
        "products": products,
        "leftover_product": left_p,
        "leftover_reactant": left_r,
        "formulas": formulas,
        "mapped": raw.mapped,
        "edits": raw.edits,
        "edits_proc": raw.edits_proc,
    }


def _odd_reactions(start: int) -> list[uspto.RawReaction]:
    lines = [
        ("CCO", "CCO"),  # no '>>'
        ("[CH3:1][C:2](=[O:3])[Cl:4].C1CC>>[CH3:1][C:2]=[O:3]", "CC=O"),  # unparsable reagent
        ("[CH3:1][OH:2].[Na+].[Cl-]>>[CH3:1][O:2]C", "COC"),  # Na+ / Cl- stay reagents
        ("[CH3:1][OH:2]>>[CH3:1][OH:2]", "CO"),  # balanced
        ("[CH3:1][OH:2]>>[CH3:1][OH:2]", "C1CC"),  # unparsable product
        ("CO.CCO>>[CH3:1][OH:2]", "CO"),  # no reactant
        ("[CH3:1][Br:2].[OH-:3].[Na+]>>[CH3:1][OH:3]", "CO"),  # leftover chain
    ]
    return [uspto.RawReaction(start + i, m, "", None, t) for i, (m, t) in enumerate(lines)]


def test_composition_from_the_smiles_string_is_mol_composition() -> None:
    uspto.clear_caches()
    for smi in TRICKY:
        can = uspto.canonical_fragment(smi)
        assert can is not None, smi
        mol = Chem.MolFromSmiles(can)
        for comp in (uspto.smiles_order_composition(mol, can), uspto._composition(can)):
            assert list(comp.items()) == list(mol_composition(mol).items()), smi
        assert uspto.formula_of(can) == rdMolDescriptors.CalcMolFormula(mol)


def test_a_string_that_does_not_line_up_with_its_molecule_falls_back() -> None:
    mol = Chem.MolFromSmiles("[H]C([H])([H])O")  # RDKit removes the [H] atoms: four string atoms, two in the graph
    comp = uspto.smiles_order_composition(mol, "[H]C([H])([H])O")
    assert list(comp.items()) == list(mol_composition(mol).items()) == [("C", 1), ("O", 1), ("H", 4)]


def test_fast_path_records_equal_the_slow_oracle_and_the_pool_keeps_input_order() -> None:
    raws = uspto.read_split(bundled_data_dir(), "valid", 250)
    raws += _odd_reactions(len(raws))
    expected = [_oracle(r) for r in raws]
    uspto.clear_caches()
    assert [uspto.process_reaction(r) for r in raws] == expected
    warm = [uspto.process_reaction(r) for r in raws]  # every molecule cached now
    assert warm == expected
    assert [list(r) for r in warm] == [list(r) for r in expected]  # key order too (the JSON lines keep it)
    uspto.clear_caches()
    assert _process_all(raws, 2, "test") == expected
    assert _process_all(raws[:3], 2, "test") == expected[:3]  # fewer reactions than chunks
