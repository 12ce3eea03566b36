"""Gold bond-edit labels from atom-mapped reactions, and their exact application with RDKit (no torch).

A WLDN/rexgen-style decoder predicts, over the reactant atoms, the product bond order of candidate atom pairs
and per-atom changes of hydrogen count and formal charge. This module derives those labels from a base
reaction's atom-mapped SMILES and applies them back to the reactant graph, so that the labels can be checked
to reproduce the gold products exactly.

Atom keys. Labels are keyed by a *global* atom index: the reactant molecules are read from their canonical
SMILES as listed in the record's ``reactants`` (``Chem.MolFromSmiles`` atom order, which is the canonical
output order), and their atoms are numbered consecutively in list order. A model that reads
those canonical SMILES (in any shuffled order) converts with ``global = offset(molecule) + atom index``
(:meth:`EditLabels.key`). The reactant-side leftover chain, if present, is part of ``reactants`` but has
no mapped atoms: it never changes.

Decisions (documented because a model must learn the same convention):

* Reagents are not part of the graph; only molecules that give an atom to the product are.
* A reactant atom absent from the mapped product (a leaving-group atom) keeps its charge; its bonds to atoms
  that stay are broken ("none"), bonds among leaving atoms are kept, and it gains one hydrogen per unit of
  broken bond order (aromatic counts 1), so leaving groups come out as closed-shell neutral by-products
  (``HCl``, ``H2O``, ``1H-1,2,4-triazole``) that RDKit can sanitise. By-products are never compared with the
  gold: the benchmark writes the product-side leftover as an artificial chain of the unbalanced atoms
  (:func:`gnn_chemalgebra.chem.leftover.leftover_from_composition`).
* ``product_atoms`` lists the atoms that end up in the gold (MIT) product molecules. The mapped product
  side sometimes carries spectator ions (``[Na+]``, ``Cl``) that the MIT target omits; their atoms follow
  the mapped product for the edits but are not product atoms. After applying the edits, the connected
  components that contain a product atom are the products; the other components are by-products.
* Stereo: atoms whose tetrahedral parity or double bonds whose E/Z parity the product specifies and that
  the reactant graph does not already carry are labelled (``chiral``, ``bond_stereo``) relative to sorted
  global neighbour indices, so the labels are independent of any SMILES atom order.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rdkit import Chem

from ..errors import ChemistryError
from .composition import charge_suffix
from .smiles import shared_mol

BOND_CLASSES: tuple[str, ...] = ("none", "single", "double", "triple", "aromatic")
NONE, SINGLE, DOUBLE, TRIPLE, AROMATIC = range(5)
_CLASS_OF_TYPE = {
    Chem.BondType.SINGLE: SINGLE,
    Chem.BondType.DOUBLE: DOUBLE,
    Chem.BondType.TRIPLE: TRIPLE,
    Chem.BondType.AROMATIC: AROMATIC,
    Chem.BondType.DATIVE: SINGLE,
}
_TYPE_OF_CLASS = {
    SINGLE: Chem.BondType.SINGLE,
    DOUBLE: Chem.BondType.DOUBLE,
    TRIPLE: Chem.BondType.TRIPLE,
    AROMATIC: Chem.BondType.AROMATIC,
}
_STEREO_E, _STEREO_Z, _DIR_NONE = Chem.BondStereo.STEREOE, Chem.BondStereo.STEREOZ, Chem.BondDir.NONE
_BOND_ORDER = {NONE: 0, SINGLE: 1, DOUBLE: 2, TRIPLE: 3, AROMATIC: 1}
_MAP = re.compile(r":(\d+)\]")
_ARROW = re.compile(r"(?<!-)>")  # '->' is a dative bond, not a reaction arrow

# Failure causes (keys of the report): an EditLabelError carries one of the first seven, diagnose() returns
# one of the last four when applied labels give other products than the gold.
CAUSE_PARSE = "unparsable_mapped_smiles"
CAUSE_REACTANT_MATCH = "mapped_reactant_not_in_record"
CAUSE_PRODUCT_MATCH = "gold_product_not_in_mapped_product"
CAUSE_DUPLICATE_MAP = "duplicate_atom_map"
CAUSE_UNMAPPED_PRODUCT_ATOM = "product_atom_without_reactant_atom"
CAUSE_ATOM_ORDER = "canonical_atom_order_mismatch"
CAUSE_SANITIZE = "sanitisation_failure"
CAUSE_STEREO = "stereo_mismatch"
CAUSE_H_COUNT = "hydrogen_count_mismatch"
CAUSE_CHARGE = "charge_mismatch"
CAUSE_OTHER = "other_mismatch"
CAUSE_NO_MAP = "no_atom_map"


class EditLabelError(ValueError):
    """Labels cannot be derived or applied; ``cause`` is one of the ``CAUSE_*`` strings."""

    def __init__(self, cause: str, detail: str = "") -> None:
        self.cause = cause
        self.detail = detail
        super().__init__(f"{cause}: {detail}" if detail else cause)


@dataclass
class EditLabels:
    """Sparse gold edits over the reactant atoms (global indices, see the module docstring).

    ``bonds`` holds only the candidate pairs whose class changes, ``(i, j, class)`` with ``i < j``;
    every other existing bond keeps its class and every other pair stays unbonded
    (:func:`candidate_pairs` expands them). ``h_delta``/``charge_delta`` hold non-zero deltas only.
    ``chiral`` maps an atom to +1/-1: the product's tetrahedral parity with the neighbours taken in
    ascending global index (an implicit H keeps its slot), 0 for "none"; ``bond_stereo`` maps ``(i, j)``
    to +1 (cis) / -1 (trans) for the lowest-index neighbours of ``i`` and ``j``, 0 for "none". Both are sparse: only
    where the product differs from what the edited reactant graph would carry (see :func:`_label_stereo`).
    ``maps`` records the atom-map number of each atom (0 where unmapped), for debugging and tests only.
    """

    n_atoms: list[int]
    bonds: list[tuple[int, int, int]] = field(default_factory=list)
    h_delta: dict[int, int] = field(default_factory=dict)
    charge_delta: dict[int, int] = field(default_factory=dict)
    product_atoms: list[int] = field(default_factory=list)
    chiral: dict[int, int] = field(default_factory=dict)
    bond_stereo: dict[tuple[int, int], int] = field(default_factory=dict)
    maps: list[int] = field(default_factory=list)

    @property
    def offsets(self) -> list[int]:
        """Global index of the first atom of each reactant molecule."""
        return list(itertools.accumulate([0, *self.n_atoms[:-1]]))

    def key(self, g: int) -> tuple[int, int]:
        """Global index -> ``(molecule index in reactants, atom index in its canonical molecule)``."""
        for m, off in reversed(list(enumerate(self.offsets))):
            if g >= off:
                return m, g - off
        raise IndexError(g)

    def to_json(self) -> dict[str, Any]:
        """Plain lists only (JSON object keys would become strings)."""
        return {
            "n_atoms": list(self.n_atoms),
            "bonds": [list(b) for b in self.bonds],
            "h_delta": sorted([a, d] for a, d in self.h_delta.items()),
            "charge_delta": sorted([a, d] for a, d in self.charge_delta.items()),
            "product_atoms": list(self.product_atoms),
            "chiral": sorted([a, p] for a, p in self.chiral.items()),
            "bond_stereo": sorted([i, j, p] for (i, j), p in self.bond_stereo.items()),
            "maps": list(self.maps),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> EditLabels:
        return cls(
            n_atoms=list(d["n_atoms"]),
            bonds=[(int(i), int(j), int(c)) for i, j, c in d.get("bonds", [])],
            h_delta={int(a): int(x) for a, x in d.get("h_delta", [])},
            charge_delta={int(a): int(x) for a, x in d.get("charge_delta", [])},
            product_atoms=[int(a) for a in d.get("product_atoms", [])],
            chiral={int(a): int(p) for a, p in d.get("chiral", [])},
            bond_stereo={(int(i), int(j)): int(p) for i, j, p in d.get("bond_stereo", [])},
            maps=[int(m) for m in d.get("maps", [])],
        )


def bond_class(bond: Chem.Bond | None) -> int:
    """Label class of an RDKit bond (``None`` -> ``none``); dative bonds count as single."""
    if bond is None:
        return NONE
    return _CLASS_OF_TYPE.get(bond.GetBondType(), SINGLE)


def _split_reaction(mapped: str) -> tuple[str, str]:
    parts = _ARROW.split(mapped.split(" ")[0])
    if len(parts) != 3:
        raise EditLabelError(CAUSE_PARSE, "not a reaction SMILES")
    lhs = ".".join(p for p in (parts[0], parts[1]) if p)
    return lhs, parts[2]


def _parse(smiles: str) -> Chem.Mol:
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        raise EditLabelError(CAUSE_PARSE, smiles)
    return mol


def _parse_shared(smiles: str) -> Chem.Mol:
    """:func:`_parse` for callers that only copy the molecule (``CombineMols``): a string the strict reader
    accepts is :func:`~.smiles.shared_mol`'s parse (the same ``MolFromSmiles`` result, parsed once per line's
    molecules); anything else is read by :func:`_parse` exactly as before."""
    try:
        return shared_mol(smiles)
    except ChemistryError:
        return _parse(smiles)


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


def _parity(seq: Sequence[int]) -> int:
    """+1 for an even permutation of ``sorted(seq)``, -1 for an odd one."""
    seq = list(seq)
    sign = 1
    for i in range(len(seq)):
        for j in range(i + 1, len(seq)):
            if seq[i] > seq[j]:
                sign = -sign
    return sign


def _tetra_parity(atom: Chem.Atom, index_of: dict[int, int]) -> int:
    """Parity of ``atom``'s chiral tag relative to neighbours sorted by global index (0 if not chiral).

    RDKit's tag refers to the atom's bond order with an implicit H counted first; permuting the neighbour
    list oddly flips it, so the parity is tag * permutation sign.
    """
    tag = atom.GetChiralTag()
    if tag not in (Chem.ChiralType.CHI_TETRAHEDRAL_CW, Chem.ChiralType.CHI_TETRAHEDRAL_CCW):
        return 0
    base = 1 if tag == Chem.ChiralType.CHI_TETRAHEDRAL_CCW else -1
    nbrs = [index_of[b.GetOtherAtomIdx(atom.GetIdx())] for b in atom.GetBonds()]
    return base * _parity(nbrs)


def _set_tetra(atom: Chem.Atom, parity: int, index_of: dict[int, int]) -> None:
    nbrs = [index_of[b.GetOtherAtomIdx(atom.GetIdx())] for b in atom.GetBonds()]
    p = parity * _parity(nbrs)
    atom.SetChiralTag(Chem.ChiralType.CHI_TETRAHEDRAL_CCW if p > 0 else Chem.ChiralType.CHI_TETRAHEDRAL_CW)


def _double_bond_parity(bond: Chem.Bond, index_of: dict[int, int]) -> int:
    """+1 if the lowest-global-index neighbours of the two ends are cis, -1 if trans, 0 if unspecified.

    RDKit's E/Z (and CIS/TRANS) refer to the bond's two stereo atoms; swapping one reference neighbour
    for the other flips the relation.
    """
    st = bond.GetStereo()
    if st in (Chem.BondStereo.STEREOZ, Chem.BondStereo.STEREOCIS):
        sign = 1
    elif st in (Chem.BondStereo.STEREOE, Chem.BondStereo.STEREOTRANS):
        sign = -1
    else:
        return 0
    ref = list(bond.GetStereoAtoms())
    if len(ref) != 2:
        return 0
    for end, r in ((bond.GetBeginAtom(), ref[0]), (bond.GetEndAtom(), ref[1])):
        other = bond.GetOtherAtomIdx(end.GetIdx())
        nbrs = [n.GetIdx() for n in end.GetNeighbors() if n.GetIdx() != other]
        if not nbrs:
            return 0
        if min(nbrs, key=lambda x: index_of[x]) != r:
            sign = -sign
    return sign


def extract_labels(mapped: str, reactants: Sequence[str], products: Sequence[str] | None = None) -> EditLabels:
    """Gold edits of one base reaction.

    ``mapped``: rexgen's atom-mapped reaction SMILES; ``reactants``: the record's canonical reactants (the
    leftover chain may be included); ``products``: the gold non-leftover products (all mapped product
    fragments when ``None``). Raises :class:`EditLabelError` on mapping quirks.
    """
    lhs, rhs = _split_reaction(mapped)
    # Product side: map -> (fragment, atom); which fragments are gold products.
    p_frags = [_parse(f) for f in rhs.split(".") if f]
    p_atom: dict[int, tuple[int, Chem.Atom]] = {}
    for fi, frag in enumerate(p_frags):
        for a in frag.GetAtoms():
            m = a.GetAtomMapNum()
            if not m:  # no reactant atom can become it
                raise EditLabelError(CAUSE_UNMAPPED_PRODUCT_ATOM, f"unmapped {a.GetSymbol()} in the product")
            if m in p_atom:
                raise EditLabelError(CAUSE_DUPLICATE_MAP, f"product map {m}")
            p_atom[m] = (fi, a)
    gold_frags = _match_products(p_frags, products)

    # Reactant side: mapped fragments that give an atom to the product, matched to the record's entries.
    r_mols = []
    for s in reactants:
        mol = Chem.MolFromSmiles(s)
        if mol is None:
            raise EditLabelError(CAUSE_PARSE, s)
        r_mols.append(mol)
    labels = EditLabels(n_atoms=[m.GetNumAtoms() for m in r_mols])
    offsets = labels.offsets
    labels.maps = [0] * sum(labels.n_atoms)
    used = [False] * len(reactants)
    r_state: dict[int, tuple[int, int]] = {}  # map -> (total H, charge)
    g_of_map: dict[int, int] = {}
    r_bonds: dict[tuple[int, int], int] = {}  # (map, map) sorted -> class
    for f in lhs.split("."):
        if not f or not set(map(int, _MAP.findall(f))) & p_atom.keys():
            continue
        frag = _parse(f)
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
        for b in frag.GetBonds():
            ma, mb = b.GetBeginAtom().GetAtomMapNum(), b.GetEndAtom().GetAtomMapNum()
            if ma and mb:
                r_bonds[(min(ma, mb), max(ma, mb))] = bond_class(b)
    missing = p_atom.keys() - g_of_map.keys()
    if missing:
        raise EditLabelError(CAUSE_UNMAPPED_PRODUCT_ATOM, f"maps {sorted(missing)[:5]}")

    # Bonds: existing reactant bonds plus bonds formed in the product.
    p_bonds: dict[tuple[int, int], int] = {}
    for frag in p_frags:
        for b in frag.GetBonds():
            ma, mb = b.GetBeginAtom().GetAtomMapNum(), b.GetEndAtom().GetAtomMapNum()
            if ma and mb:
                p_bonds[(min(ma, mb), max(ma, mb))] = bond_class(b)
    changed: dict[tuple[int, int], int] = {}
    cap: Counter = Counter()  # leaving atom map -> hydrogens that close its broken bonds
    for (ma, mb), old in r_bonds.items():
        in_a, in_b = ma in p_atom, mb in p_atom
        if in_a and in_b:
            new = p_bonds.get((ma, mb), NONE)
        elif in_a or in_b:
            new = NONE
            cap[mb if in_a else ma] += _BOND_ORDER[old]
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


def _label_stereo(
    labels: EditLabels, r_mols: Sequence[Chem.Mol], frags: Sequence[Chem.Mol], g_of_map: dict[int, int]
) -> None:
    """Stereo labels where the product says something other than the edited reactant graph would.

    Applying edits clears the stereo of every atom and double bond that touches an edited pair (its
    neighbour list changed), so those get a label whenever the product specifies stereo; elsewhere the
    reactant's parity survives and only a difference (including a loss, label 0) is labelled.
    """
    combined = _combine(r_mols)
    ident = {i: i for i in range(combined.GetNumAtoms())}
    touched = {i for b in labels.bonds for i in b[:2]}
    for frag in frags:
        index_of = {a.GetIdx(): g_of_map[a.GetAtomMapNum()] for a in frag.GetAtoms()}
        for a in frag.GetAtoms():
            g = index_of[a.GetIdx()]
            before = 0 if g in touched else _tetra_parity(combined.GetAtomWithIdx(g), ident)
            p = _tetra_parity(a, index_of)
            if p != before:
                labels.chiral[g] = p
        for b in frag.GetBonds():
            if b.GetBondType() != Chem.BondType.DOUBLE:
                continue
            i, j = sorted((index_of[b.GetBeginAtomIdx()], index_of[b.GetEndAtomIdx()]))
            rb = combined.GetBondBetweenAtoms(i, j)
            before = 0
            if rb is not None and rb.GetBondType() == Chem.BondType.DOUBLE and not touched & {i, j}:
                before = _double_bond_parity(rb, ident)
            p = _double_bond_parity(b, index_of)
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


def _combine(mols: Sequence[Chem.Mol]) -> Chem.Mol:
    out = Chem.Mol()
    for m in mols:
        out = Chem.CombineMols(out, m)
    return out


def candidate_pairs(reactants: Sequence[str], labels: EditLabels) -> list[tuple[int, int, int]]:
    """Dense labels: every existing reactant bond and every formed pair with its product class."""
    combined = _combine([Chem.MolFromSmiles(s) for s in reactants])
    out = {}
    for b in combined.GetBonds():
        i, j = sorted((b.GetBeginAtomIdx(), b.GetEndAtomIdx()))
        out[(i, j)] = bond_class(b)
    for i, j, c in labels.bonds:
        out[(i, j)] = c
    return sorted((i, j, c) for (i, j), c in out.items())


class ReactantGraph:
    """The reactants of one reaction parsed once, ready for any number of edit sets (see :func:`reactant_graph`).

    ``template`` is the combined reactant graph with every atom's hydrogens made an explicit count
    (``NoImplicit``) and no radical electrons, i.e. :func:`_edited_mol`'s starting point for an empty edit set;
    an edit set copies it and changes only the atoms and bonds it names. ``h``/``charge``/``symbol``: each
    atom's total hydrogens, formal charge and element in the reactants, by global index.
    """

    def __init__(self, reactants: Sequence[str]) -> None:
        mols = [_parse_shared(s) for s in reactants]  # only copied, by _combine
        self.n_atoms = [m.GetNumAtoms() for m in mols]
        rw = Chem.RWMol(_combine(mols))
        self.h: list[int] = []
        self.charge: list[int] = []
        self.symbol: list[str] = []
        for g in range(rw.GetNumAtoms()):
            a = rw.GetAtomWithIdx(g)
            n_h = a.GetTotalNumHs()
            self.h.append(n_h)
            self.charge.append(a.GetFormalCharge())
            self.symbol.append(a.GetSymbol())
            a.SetNumExplicitHs(n_h)
            a.SetNoImplicit(True)
            a.SetNumRadicalElectrons(0)
        self.template = rw
        # the only bonds an edited copy can carry E/Z stereo or a direction on (edits add none; see _perceive_stereo)
        self.stereo_pairs = tuple(
            (b.GetBeginAtomIdx(), b.GetEndAtomIdx())
            for b in map(rw.GetBondWithIdx, range(rw.GetNumBonds()))
            if b.GetStereo() in (_STEREO_E, _STEREO_Z) or b.GetBondDir() != _DIR_NONE
        )


@functools.lru_cache(maxsize=1024)  # a reaction's candidates ask within its own search: a short memory suffices
def _cached_graph(reactants: tuple[str, ...]) -> ReactantGraph:
    return ReactantGraph(reactants)


def reactant_graph(reactants: Sequence[str]) -> ReactantGraph:
    """The :class:`ReactantGraph` of a reactant list, cached: a decoder tries many edit sets per reaction.

    Raises :class:`EditLabelError` (``unparsable_mapped_smiles``) when RDKit cannot read a reactant."""
    return _cached_graph(tuple(reactants))


def _edited_mol(reactants: Sequence[str] | ReactantGraph, labels: EditLabels, *, stereo: bool = True) -> Chem.RWMol:
    """The combined reactant graph with every label applied, not yet sanitised.

    Hydrogens become explicit counts with ``NoImplicit`` so that RDKit cannot re-derive them from valence;
    changed bonds get their new type and aromatic flag; atoms touched by a bond edit are aromatic exactly
    when one of their bonds is. A copy of the reactants' parsed template
    (:class:`ReactantGraph`) in which only the atoms with a hydrogen or charge change are set again.
    """
    graph = reactants if isinstance(reactants, ReactantGraph) else reactant_graph(reactants)
    if graph.n_atoms != list(labels.n_atoms):
        raise EditLabelError(CAUSE_ATOM_ORDER, "reactant atom counts differ from the labels")
    n = len(graph.h)
    for g in sorted(labels.h_delta):  # ascending, as a scan of every atom would meet them
        if 0 <= g < n and graph.h[g] + labels.h_delta[g] < 0:
            raise EditLabelError(CAUSE_H_COUNT, f"atom {g} would have {graph.h[g] + labels.h_delta[g]} hydrogens")
    rw = Chem.RWMol(graph.template)
    for g, d in labels.h_delta.items():
        if 0 <= g < n:
            rw.GetAtomWithIdx(g).SetNumExplicitHs(graph.h[g] + d)
    for g, d in labels.charge_delta.items():
        if 0 <= g < n:
            rw.GetAtomWithIdx(g).SetFormalCharge(graph.charge[g] + d)
    touched: set[int] = set()
    for i, j, c in labels.bonds:
        touched.update((i, j))
        bond = rw.GetBondBetweenAtoms(i, j)
        if c == NONE:
            if bond is not None:
                rw.RemoveBond(i, j)
            continue
        if bond is None:
            rw.AddBond(i, j, _TYPE_OF_CLASS[c])
            bond = rw.GetBondBetweenAtoms(i, j)
        else:
            bond.SetBondType(_TYPE_OF_CLASS[c])
        bond.SetIsAromatic(c == AROMATIC)
    for g in touched:
        a = rw.GetAtomWithIdx(g)
        a.SetIsAromatic(any(b.GetIsAromatic() for b in a.GetBonds()))
    _apply_stereo(rw, labels, touched, use_labels=stereo)
    return rw


def _apply_stereo(mol: Chem.RWMol, labels: EditLabels, touched: set[int], *, use_labels: bool) -> None:
    """Clear stereo that the edits made meaningless (atoms and double bonds at an edited pair), then set
    the labelled parities (0 clears)."""
    index_of = {i: i for i in range(mol.GetNumAtoms())}
    for g in touched:
        atom = mol.GetAtomWithIdx(g)
        atom.SetChiralTag(Chem.ChiralType.CHI_UNSPECIFIED)
        for b in atom.GetBonds():
            if b.GetBondType() == Chem.BondType.DOUBLE:
                b.SetStereo(Chem.BondStereo.STEREONONE)
    if not use_labels:
        return
    for g, p in labels.chiral.items():
        atom = mol.GetAtomWithIdx(g)
        if p == 0:
            atom.SetChiralTag(Chem.ChiralType.CHI_UNSPECIFIED)
        else:
            _set_tetra(atom, p, index_of)
    for (i, j), p in labels.bond_stereo.items():
        b = mol.GetBondBetweenAtoms(i, j)
        if b is None or b.GetBondType() != Chem.BondType.DOUBLE:
            continue
        b.SetStereo(Chem.BondStereo.STEREONONE)
        ends = []
        for x, other in ((b.GetBeginAtomIdx(), b.GetEndAtomIdx()), (b.GetEndAtomIdx(), b.GetBeginAtomIdx())):
            nbrs = [n.GetIdx() for n in mol.GetAtomWithIdx(x).GetNeighbors() if n.GetIdx() != other]
            if not nbrs:
                break
            ends.append(min(nbrs))
        if p != 0 and len(ends) == 2:
            b.SetStereoAtoms(ends[0], ends[1])
            b.SetStereo(Chem.BondStereo.STEREOCIS if p > 0 else Chem.BondStereo.STEREOTRANS)


def _perceive_stereo(mol: Chem.Mol, pairs: Sequence[tuple[int, int]] | None = None) -> None:
    """Make RDKit write the edited double-bond stereo.

    The legacy perception (RDKit's default) reads double-bond stereo from the single-bond directions that
    the reactant SMILES left behind, which the edits invalidate: turn every E/Z into CIS/TRANS (valid for
    the stereo atoms, which are CIP-ranked), drop all directions, regenerate them, then perceive.

    ``pairs``: the bonds (atom pairs) that can carry E/Z or a direction, :attr:`ReactantGraph.stereo_pairs`
    for a graph edited by :func:`_edited_mol` (its new bonds have neither, it only sets CIS/TRANS/none, and
    sanitisation sets neither); the other bonds are left as they are, which the scan of every bond would
    do too. ``None``: every bond."""
    if pairs is None:  # by index: RDKit's Python bond iterator costs more than the work
        bonds = map(mol.GetBondWithIdx, range(mol.GetNumBonds()))
    else:
        bonds = (mol.GetBondBetweenAtoms(i, j) for i, j in pairs)
    for b in bonds:
        if b is None:  # removed by the edits
            continue
        st = b.GetStereo()
        if st == _STEREO_E:
            b.SetStereo(Chem.BondStereo.STEREOTRANS)
        elif st == _STEREO_Z:
            b.SetStereo(Chem.BondStereo.STEREOCIS)
        if b.GetBondDir() != _DIR_NONE:
            b.SetBondDir(_DIR_NONE)
    Chem.SetDoubleBondNeighborDirections(mol)
    Chem.AssignStereochemistry(mol, cleanIt=True, force=True)


def _components(mol: Chem.Mol) -> list[tuple[int, ...]]:
    return [tuple(c) for c in Chem.GetMolFrags(mol, asMols=False, sanitizeFrags=False)]


@functools.lru_cache(maxsize=65536)
def _recanonical(smiles: str) -> str | None:
    """Round-trip through the parser, so the string is exactly what the builder would have written (cached:
    the candidate edit sets of a reaction share most of their components)."""
    mol = Chem.MolFromSmiles(smiles)
    return None if mol is None else Chem.MolToSmiles(mol)


def _sanitised(rw: Chem.RWMol, stereo_pairs: Sequence[tuple[int, int]] | None = None) -> tuple[Chem.Mol | None, str]:
    """The sanitised copy of an edited graph with its double-bond stereo perceived, or ``(None, reason)``
    (``stereo_pairs``: see :func:`_perceive_stereo`)."""
    mol = rw.GetMol()
    try:
        Chem.SanitizeMol(mol)
        _perceive_stereo(mol, stereo_pairs)
    except Exception as exc:
        return None, str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return mol, ""


def _fallback_components(rw: Chem.RWMol, product: set[int], reason: str) -> list[tuple[str, bool]]:
    """Every component of a graph RDKit refused, written and re-parsed on its own (see
    :func:`apply_edits_components`)."""
    out: list[tuple[str, bool]] = []
    for atoms in _components(rw):
        raw = Chem.MolFragmentToSmiles(rw, atomsToUse=list(atoms), canonical=True)
        is_product = bool(product.intersection(atoms))
        smi = _recanonical(raw)
        if smi is None and is_product:
            raise EditLabelError(CAUSE_SANITIZE, reason) from None
        out.append((smi or raw, is_product))
    return out


def _written(mol: Chem.Mol, atoms: tuple[int, ...], is_product: bool) -> str:
    raw = Chem.MolFragmentToSmiles(mol, atomsToUse=list(atoms), canonical=True)
    smi = _recanonical(raw)
    if smi is None and is_product:
        raise EditLabelError(CAUSE_SANITIZE, f"component {raw} does not re-parse")
    return smi or raw


def apply_edits_components(
    reactants: Sequence[str] | ReactantGraph, labels: EditLabels, *, stereo: bool = True
) -> list[tuple[str, bool]]:
    """Apply the edits; every connected component as ``(canonical SMILES, contains a product atom)``.

    The whole graph is sanitised at once; if RDKit refuses it (usually a kekulisation problem in one
    fragment) each component is written and re-parsed on its own, so that a broken by-product cannot sink
    the products. A product component that still fails raises :class:`EditLabelError`
    (``sanitisation_failure``); a failing by-product is returned as written. ``stereo=False`` ignores the
    stereo labels (to measure what they contribute).
    """
    graph = reactants if isinstance(reactants, ReactantGraph) else reactant_graph(reactants)
    rw = _edited_mol(graph, labels, stereo=stereo)
    product = set(labels.product_atoms)
    mol, reason = _sanitised(rw, graph.stereo_pairs)
    if mol is None:
        return _fallback_components(rw, product, reason)
    out = []
    for atoms in _components(mol):
        is_product = bool(product.intersection(atoms))
        out.append((_written(mol, atoms, is_product), is_product))
    return out


def product_composition(mol: Chem.Mol, atoms: Iterable[int]) -> Counter:
    """Charge-tagged labels and hydrogens (``mol_composition``'s counts) of some atoms of a sanitised graph."""
    comp: Counter = Counter()
    n_h = 0
    for g in atoms:
        a = mol.GetAtomWithIdx(g)
        comp[a.GetSymbol() + charge_suffix(a.GetFormalCharge())] += 1
        n_h += a.GetTotalNumHs()
    if n_h:
        comp["H"] += n_h
    return comp


def edited_products(
    reactants: Sequence[str] | ReactantGraph,
    labels: EditLabels,
    *,
    stereo: bool = True,
    accept: Callable[[Counter], bool] | None = None,
) -> list[str] | None:
    """:func:`apply_edits`, with an early verdict on the products' composition.

    ``accept`` sees the composition of the product components read off the sanitised graph (labels and
    hydrogens, :func:`product_composition`), before any product is written; when it returns ``False`` the
    result is ``None``. Writing and re-parsing a sanitised component keeps its composition, so a composition
    test gives the same answer here as on the written products, for a fraction of the cost (a decoder
    rejects most candidate edit sets on their balance). A graph RDKit refuses is written component by
    component as :func:`apply_edits_components` does, and ``accept`` is not asked (the written products
    can then differ from the graph). Only product components are written.
    """
    if labels.product_atoms:
        keep = set(labels.product_atoms)
    else:
        keep = {i for b in labels.bonds for i in b[:2]} | labels.h_delta.keys() | labels.charge_delta.keys()
    probe = replace(labels, product_atoms=sorted(keep))
    graph = reactants if isinstance(reactants, ReactantGraph) else reactant_graph(reactants)
    rw = _edited_mol(graph, probe, stereo=stereo)
    mol, reason = _sanitised(rw, graph.stereo_pairs)
    if mol is None:
        return sorted(s for s, is_product in _fallback_components(rw, keep, reason) if is_product)
    parts = [atoms for atoms in _components(mol) if keep.intersection(atoms)]
    if accept is not None and not accept(product_composition(mol, (g for atoms in parts for g in atoms))):
        return None
    return sorted(_written(mol, atoms, True) for atoms in parts)


def apply_edits(reactants: Sequence[str] | ReactantGraph, labels: EditLabels, *, stereo: bool = True) -> list[str]:
    """Product molecules (canonical SMILES, sorted): the components that contain a product atom.

    When ``labels.product_atoms`` is empty (a model that does not predict membership), every component that
    contains an atom touched by an edit is returned instead, by-products included.
    """
    products = edited_products(reactants, labels, stereo=stereo)
    return [] if products is None else products  # None only with ``accept``


def _without(smiles: Iterable[str], *, stereo: bool, hydrogens: bool, charges: bool) -> Counter:
    """Multiset of canonical SMILES with the chosen features erased (diagnosis of a mismatch)."""
    out: Counter = Counter()
    for s in smiles:
        mol = Chem.MolFromSmiles(s)
        if mol is None:
            out[s] += 1
            continue
        if not stereo:
            Chem.RemoveStereochemistry(mol)
        if hydrogens and charges:
            out[Chem.MolToSmiles(mol)] += 1
            continue
        rw = Chem.RWMol(mol)
        Chem.Kekulize(rw, clearAromaticFlags=True)
        for a in rw.GetAtoms():
            if not hydrogens:
                a.SetNoImplicit(True)
                a.SetNumExplicitHs(0)
                a.SetNumRadicalElectrons(0)
            if not charges:
                a.SetFormalCharge(0)
        for b in rw.GetBonds():
            b.SetBondType(Chem.BondType.SINGLE)
        out[Chem.MolToSmiles(rw)] += 1
    return out


def diagnose(predicted: Sequence[str], gold: Sequence[str]) -> str:
    """Why two product multisets differ ('' when equal): stereo only, hydrogens, charges, or other."""
    if Counter(predicted) == Counter(gold):
        return ""
    if _without(predicted, stereo=False, hydrogens=True, charges=True) == _without(
        gold, stereo=False, hydrogens=True, charges=True
    ):
        return CAUSE_STEREO
    skel = {"stereo": False, "hydrogens": False, "charges": True}
    if _without(predicted, **skel) == _without(gold, **skel):
        return CAUSE_H_COUNT
    skel["charges"] = False
    if _without(predicted, **skel) == _without(gold, **skel):
        return CAUSE_CHARGE
    return CAUSE_OTHER


def labels_for_record(record: dict[str, Any]) -> EditLabels:
    """Gold labels of one ``reactions-*.jsonl`` record, keyed by its ``reactants`` list (what a dataset needs).

    Records without an atom-mapped reaction (the USPTO-500-MT extra reactions) raise ``no_atom_map``.
    """
    if not record.get("mapped"):
        raise EditLabelError(CAUSE_NO_MAP, "the record has no atom-mapped reaction SMILES")
    return extract_labels(record["mapped"], record["reactants"], gold_products(record))


def check_record(record: dict[str, Any], *, stereo: bool = True) -> tuple[str, EditLabels | None]:
    """Derive and re-apply the gold edits of one ``reactions-*.jsonl`` record.

    Returns ``(failure cause or '', labels or None)``.
    """
    gold = gold_products(record)
    try:
        labels = labels_for_record(record)
        predicted = apply_edits(record["reactants"], labels, stereo=stereo)
    except EditLabelError as exc:
        return exc.cause, None
    return diagnose(predicted, gold), labels


def gold_products(record: dict[str, Any]) -> list[str]:
    """The record's products without the artificial leftover (which the builder appends last)."""
    products = list(record["products"])
    if record.get("leftover_product") is not None:
        products = products[:-1]
    return products
