"""Gold bond-edit labels from an atom-mapped reaction (:func:`extract_labels`, per record
:func:`labels_for_record`), keyed by the record's canonical reactant SMILES (see :mod:`.edits`)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence
from typing import Any

from rdkit import Chem

from .edit_labels import (
    BOND_ORDER,
    CAUSE_ATOM_ORDER,
    CAUSE_DUPLICATE_MAP,
    CAUSE_NO_MAP,
    CAUSE_PARSE,
    CAUSE_PRODUCT_MATCH,
    CAUSE_REACTANT_MATCH,
    CAUSE_UNMAPPED_PRODUCT_ATOM,
    NONE,
    EditLabelError,
    EditLabels,
    bond_class,
    combine_mols,
    parse_mol,
)
from .edit_stereo import double_bond_parity, tetra_parity

_MAP = re.compile(r":(\d+)\]")
_ARROW = re.compile(r"(?<!-)>")  # '->' is a dative bond, not a reaction arrow


def _split_reaction(mapped: str) -> tuple[str, str]:
    parts = _ARROW.split(mapped.split(" ")[0])
    if len(parts) != 3:
        raise EditLabelError(CAUSE_PARSE, "not a reaction SMILES")
    lhs = ".".join(p for p in (parts[0], parts[1]) if p)
    return lhs, parts[2]


def _canonical_order(mol: Chem.Mol) -> tuple[str, list[int]]:
    """Unmapped canonical SMILES of a mapped fragment and, per canonical atom, the fragment's atom index.

    Mirrors the builder (``MolToSmiles`` of the map-stripped, sanitised fragment), so the string equals the
    record's entry and ``MolFromSmiles`` of it numbers atoms in the writer's output order.
    """
    stripped = Chem.Mol(mol)
    for a in stripped.GetAtoms():
        a.SetAtomMapNum(0)
    can = Chem.MolToSmiles(stripped)
    order = list(stripped.GetPropsAsDict(True, True)["_smilesAtomOutputOrder"])
    return can, order


def extract_labels(mapped: str, reactants: Sequence[str], products: Sequence[str] | None = None) -> EditLabels:
    """Gold edits of one base reaction.

    ``mapped``: rexgen's atom-mapped reaction SMILES; ``reactants``: the record's canonical reactants (the
    leftover chain may be included); ``products``: the gold non-leftover products (all mapped product
    fragments when ``None``). Raises :class:`EditLabelError` on mapping quirks.
    """
    lhs, rhs = _split_reaction(mapped)
    p_frags = [parse_mol(f) for f in rhs.split(".") if f]
    p_atom = _product_atoms(p_frags)
    gold_frags = _match_products(p_frags, products)

    r_mols = [parse_mol(s) for s in reactants]
    labels = EditLabels(n_atoms=[m.GetNumAtoms() for m in r_mols])
    labels.maps = [0] * sum(labels.n_atoms)
    r_frags, r_state, g_of_map = _map_reactants(lhs, p_atom.keys(), reactants, r_mols, labels)
    missing = p_atom.keys() - g_of_map.keys()
    if missing:
        raise EditLabelError(CAUSE_UNMAPPED_PRODUCT_ATOM, f"maps {sorted(missing)[:5]}")

    cap = _label_bonds(labels, _mapped_bonds(r_frags), _mapped_bonds(p_frags), p_atom.keys(), g_of_map)
    # Hydrogens, charges, product membership.
    for m, n_h in cap.items():
        labels.h_delta[g_of_map[m]] = n_h
    for m, (fi, a) in p_atom.items():
        g = g_of_map[m]
        h0, q0 = r_state[m]
        dh, dq = a.GetTotalNumHs() - h0, a.GetFormalCharge() - q0
        if dh:
            labels.h_delta[g] = dh
        if dq:
            labels.charge_delta[g] = dq
        if fi in gold_frags:
            labels.product_atoms.append(g)
    labels.product_atoms.sort()

    _label_stereo(labels, r_mols, [p_frags[fi] for fi in sorted(gold_frags)], g_of_map)
    return labels


def _product_atoms(p_frags: Sequence[Chem.Mol]) -> dict[int, tuple[int, Chem.Atom]]:
    """Map number -> (product fragment, atom); every product atom must carry a map number, each once."""
    p_atom: dict[int, tuple[int, Chem.Atom]] = {}
    for fi, frag in enumerate(p_frags):
        for a in frag.GetAtoms():
            m = a.GetAtomMapNum()
            if not m:  # no reactant atom can become it
                raise EditLabelError(CAUSE_UNMAPPED_PRODUCT_ATOM, f"unmapped {a.GetSymbol()} in the product")
            if m in p_atom:
                raise EditLabelError(CAUSE_DUPLICATE_MAP, f"product map {m}")
            p_atom[m] = (fi, a)
    return p_atom


def _map_reactants(
    lhs: str, in_product: Collection[int], reactants: Sequence[str], r_mols: Sequence[Chem.Mol], labels: EditLabels
) -> tuple[list[Chem.Mol], dict[int, tuple[int, int]], dict[int, int]]:
    """Match each mapped reactant fragment that gives an atom to the product (a map in ``in_product``) to an
    unused entry of the record's reactants (same canonical SMILES, same atom order) and fill ``labels.maps``.

    Returns those fragments, map -> (total H, charge) of the reactant atom, and map -> the atom's index over all
    reactants.
    """
    offsets = labels.offsets
    used = [False] * len(reactants)
    r_frags: list[Chem.Mol] = []
    r_state: dict[int, tuple[int, int]] = {}
    g_of_map: dict[int, int] = {}
    for f in lhs.split("."):
        if not f or not set(map(int, _MAP.findall(f))) & in_product:
            continue
        frag = parse_mol(f)
        r_frags.append(frag)
        can, order = _canonical_order(frag)
        k = next((i for i, s in enumerate(reactants) if s == can and not used[i]), None)
        if k is None:
            raise EditLabelError(CAUSE_REACTANT_MATCH, can)
        used[k] = True
        if len(order) != labels.n_atoms[k]:
            raise EditLabelError(CAUSE_ATOM_ORDER, can)
        for pos, ai in enumerate(order):
            a = frag.GetAtomWithIdx(ai)
            if a.GetSymbol() != r_mols[k].GetAtomWithIdx(pos).GetSymbol():
                raise EditLabelError(CAUSE_ATOM_ORDER, can)
            m = a.GetAtomMapNum()
            if not m:
                continue
            if m in g_of_map:
                raise EditLabelError(CAUSE_DUPLICATE_MAP, f"reactant map {m}")
            g_of_map[m] = offsets[k] + pos
            labels.maps[offsets[k] + pos] = m
            r_state[m] = (a.GetTotalNumHs(), a.GetFormalCharge())
    return r_frags, r_state, g_of_map


def _mapped_bonds(frags: Sequence[Chem.Mol]) -> dict[tuple[int, int], int]:
    """(map, map) sorted -> bond class, over the bonds between two mapped atoms."""
    bonds: dict[tuple[int, int], int] = {}
    for frag in frags:
        for b in frag.GetBonds():
            ma, mb = b.GetBeginAtom().GetAtomMapNum(), b.GetEndAtom().GetAtomMapNum()
            if ma and mb:
                bonds[(min(ma, mb), max(ma, mb))] = bond_class(b)
    return bonds


def _label_bonds(
    labels: EditLabels,
    r_bonds: dict[tuple[int, int], int],
    p_bonds: dict[tuple[int, int], int],
    in_product: Collection[int],
    g_of_map: dict[int, int],
) -> Counter:
    """Append every changed bond (reactant bonds changed or broken, product bonds formed) to ``labels.bonds``,
    sorted; return, per leaving atom's map, the hydrogens that close its broken bonds."""
    changed: dict[tuple[int, int], int] = {}
    cap: Counter = Counter()
    for (ma, mb), old in r_bonds.items():
        in_a, in_b = ma in in_product, mb in in_product
        if in_a and in_b:
            new = p_bonds.get((ma, mb), NONE)
        elif in_a or in_b:
            new = NONE
            cap[mb if in_a else ma] += BOND_ORDER[old]
        else:
            new = old
        if new != old:
            changed[(ma, mb)] = new
    for pair, new in p_bonds.items():
        if pair not in r_bonds:
            changed[pair] = new
    for (ma, mb), new in changed.items():
        i, j = sorted((g_of_map[ma], g_of_map[mb]))
        labels.bonds.append((i, j, new))
    labels.bonds.sort()
    return cap


def _label_stereo(
    labels: EditLabels, r_mols: Sequence[Chem.Mol], frags: Sequence[Chem.Mol], g_of_map: dict[int, int]
) -> None:
    """Stereo labels where the product says something other than the edited reactant graph would.

    Applying edits clears the stereo of every atom and double bond that touches an edited pair (its
    neighbour list changed), so those get a label whenever the product specifies stereo; elsewhere the
    reactant's parity survives and only a difference (including a loss, label 0) is labelled.
    """
    combined = combine_mols(r_mols)
    ident = {i: i for i in range(combined.GetNumAtoms())}
    touched = {i for b in labels.bonds for i in b[:2]}
    for frag in frags:
        index_of = {a.GetIdx(): g_of_map[a.GetAtomMapNum()] for a in frag.GetAtoms()}
        for a in frag.GetAtoms():
            g = index_of[a.GetIdx()]
            before = 0 if g in touched else tetra_parity(combined.GetAtomWithIdx(g), ident)
            p = tetra_parity(a, index_of)
            if p != before:
                labels.chiral[g] = p
        for b in frag.GetBonds():
            if b.GetBondType() != Chem.BondType.DOUBLE:
                continue
            i, j = sorted((index_of[b.GetBeginAtomIdx()], index_of[b.GetEndAtomIdx()]))
            rb = combined.GetBondBetweenAtoms(i, j)
            before = 0
            if rb is not None and rb.GetBondType() == Chem.BondType.DOUBLE and not touched & {i, j}:
                before = double_bond_parity(rb, ident)
            p = double_bond_parity(b, index_of)
            if p != before:
                labels.bond_stereo[(i, j)] = p


def _match_products(p_frags: Sequence[Chem.Mol], products: Sequence[str] | None) -> set[int]:
    """Indices of the mapped product fragments that are the gold products (a multiset match)."""
    if products is None:
        return set(range(len(p_frags)))
    cans = []
    for frag in p_frags:
        stripped = Chem.Mol(frag)
        for a in stripped.GetAtoms():
            a.SetAtomMapNum(0)
        cans.append(Chem.MolToSmiles(stripped))
    chosen: set[int] = set()
    for s in products:
        k = next((i for i, c in enumerate(cans) if c == s and i not in chosen), None)
        if k is None:
            raise EditLabelError(CAUSE_PRODUCT_MATCH, s)
        chosen.add(k)
    return chosen


def labels_for_record(record: dict[str, Any]) -> EditLabels:
    """Gold labels of one ``reactions-*.jsonl`` record, keyed by its ``reactants`` list (what a dataset needs).

    Records without an atom-mapped reaction (the USPTO-500-MT extra reactions) raise ``no_atom_map``.
    """
    if not record.get("mapped"):
        raise EditLabelError(CAUSE_NO_MAP, "the record has no atom-mapped reaction SMILES")
    return extract_labels(record["mapped"], record["reactants"], gold_products(record))


def gold_products(record: dict[str, Any]) -> list[str]:
    """The record's products without the artificial leftover (which the builder appends last)."""
    products = list(record["products"])
    if record.get("leftover_product") is not None:
        products = products[:-1]
    return products
