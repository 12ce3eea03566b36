"""The leftover of a reaction with given products as a real molecule made from a reactant's own atoms.

When the catalogue of common by-products (:mod:`.byproducts`) does not close a reaction, what the reactants leave
is often a piece of one of them: the diol of an acetal, the carboxylate of an amide cleaved by hydroxide, the acid
of a peracid, a silyl fluoride, triphenylphosphine oxide from an ylide, or a spent reagent (a urea from a
carbodiimide, DMSO from dimethyl sulfide). :func:`leftover_molecules` writes the candidates: each reactant cut at
one bond to a heteroatom (the piece capped with H, OH, O-, a halide of the line, or =O where a double bond was
cut), or with one atom taken out (its neighbours capped with H), and the spent forms of a few reagents.
:func:`close_with_leftover` tries them with the exact algebra (:func:`~.complete.complete`): a piece that is
exactly what the reaction read once leaves; else the one that balances the reaction in one way, every reactant
consumed, with the smallest coefficients; else such a piece with one small partner (:data:`SMALL`: water,
hydroxide, HCl, ammonium ...).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator, Sequence
from functools import lru_cache
from math import gcd

from rdkit import Chem
from rdkit.Chem import AllChem

from ..chem.composition import CHARGE_KEY
from ..chem.molecule import composition
from ..chem.smiles import try_canonical
from .byproducts import _may_close
from .complete import Completion, complete, leftover_of_cover

# Spent reagents: a reagent's form after it has done its work (written as reaction SMARTS on the reagent alone).
SPENT: tuple[tuple[str, str], ...] = (
    ("carbodiimide to urea", "[N:1]=[C:2]=[N:3]>>[N:1][C:2](=O)[N:3]"),
    ("sulfide to sulfoxide", "[#6:1][SX2:2][#6:3]>>[#6:1][S:2](=O)[#6:3]"),
    ("phosphine to phosphine oxide", "[PX3:1]>>[P:1]=O"),
)
CAPS_SINGLE = ("[H]", "O", "[O-]")
HALIDES = ("F", "Cl", "Br", "I")
# Small partners of a piece, tried in pairs when no piece closes a line alone (TBS-F and hydroxide from TBAF and
# water; ammonium and chloride from a nitrile hydrolysed in hydrochloric acid).
SMALL = ("O", "[OH-]", "[H+]", "Cl", "[Cl-]", "Br", "[Br-]", "[NH4+]", "N")
ELEMENTS = frozenset({"C", "H", "N", "O", "S", "P", "Si", "B", "F", "Cl", "Br", "I"})  # a piece's atoms
MAX_ATOMS = 60  # reactants larger than this are not cut (the candidates grow with the bonds)


def _emit(mol: Chem.Mol) -> Iterator[str]:
    """Each connected piece of ``mol`` as canonical SMILES: pieces that do not sanitise, hold a radical or an
    element outside :data:`ELEMENTS` (a metal's valence says nothing of a real molecule) are skipped."""
    try:
        Chem.SanitizeMol(mol)
    except (ValueError, RuntimeError):
        return
    for piece in Chem.MolToSmiles(mol).split("."):
        got = try_canonical(piece)
        if got is None:
            continue
        atoms = Chem.MolFromSmiles(got).GetAtoms()
        if all(a.GetSymbol() in ELEMENTS and not a.GetNumRadicalElectrons() for a in atoms):
            yield got


def _capped(mol: Chem.Mol, cap: str) -> Chem.Mol | None:
    """``mol`` with every dummy atom (a cut point) replaced by ``cap``: hydrogen, or a group bonded in its place."""
    rw = Chem.RWMol(mol)
    dummies = [a.GetIdx() for a in rw.GetAtoms() if a.GetAtomicNum() == 0]
    for idx in sorted(dummies, reverse=True):
        atom = rw.GetAtomWithIdx(idx)
        if cap == "[H]":
            for nb in atom.GetNeighbors():
                order = int(rw.GetBondBetweenAtoms(idx, nb.GetIdx()).GetBondTypeAsDouble())
                if nb.GetNoImplicit():  # a bracket atom: its hydrogens are written, not implied
                    nb.SetNumExplicitHs(nb.GetNumExplicitHs() + order)
            rw.RemoveAtom(idx)
            continue
        capmol = Chem.MolFromSmiles(cap)
        if capmol is None or capmol.GetNumAtoms() != 1:
            return None
        src = capmol.GetAtomWithIdx(0)
        atom.SetAtomicNum(src.GetAtomicNum())
        atom.SetFormalCharge(src.GetFormalCharge())
        atom.SetIsotope(0)
        atom.SetNoImplicit(False)
    return rw.GetMol()


def _cut_pieces(mol: Chem.Mol, halides: Sequence[str]) -> Iterator[str]:
    for bond in mol.GetBonds():
        if bond.IsInRing() or (bond.GetBeginAtom().GetSymbol() == "C" and bond.GetEndAtom().GetSymbol() == "C"):
            continue  # a leftover leaves at a bond to a heteroatom; rings and carbon skeletons stay whole
        double = bond.GetBondType() == Chem.BondType.DOUBLE
        if bond.GetBondType() not in (Chem.BondType.SINGLE, Chem.BondType.DOUBLE):
            continue
        cut = Chem.FragmentOnBonds(mol, [bond.GetIdx()], addDummies=True)
        caps = ("[H]", "O") if double else (*CAPS_SINGLE, *halides)
        for cap in caps:
            got = _capped(cut, cap)
            if got is not None:
                yield from _emit(got)


def _without_one_atom(mol: Chem.Mol) -> Iterator[str]:
    for atom in mol.GetAtoms():
        if atom.GetDegree() < 2:
            continue
        rw = Chem.RWMol(mol)
        for nb in atom.GetNeighbors():
            order = int(mol.GetBondBetweenAtoms(atom.GetIdx(), nb.GetIdx()).GetBondTypeAsDouble())
            other = rw.GetAtomWithIdx(nb.GetIdx())
            if other.GetNoImplicit():
                other.SetNumExplicitHs(other.GetNumExplicitHs() + order)
        rw.RemoveAtom(atom.GetIdx())
        yield from _emit(rw.GetMol())


def _spent(mol: Chem.Mol) -> Iterator[str]:
    halogens = [a.GetIdx() for a in mol.GetAtoms() if a.GetSymbol() in HALIDES and a.GetDegree() == 1]
    on_p = [i for i in halogens if mol.GetAtomWithIdx(i).GetNeighbors()[0].GetSymbol() == "P"]
    if on_p:  # a phosphorus halide hydrolysed: every P-X a P-OH (PBr3 -> phosphorous acid)
        rw = Chem.RWMol(mol)
        for i in on_p:
            rw.GetAtomWithIdx(i).SetAtomicNum(8)
        yield from _emit(rw.GetMol())
    for _, smarts in SPENT:
        rxn = AllChem.ReactionFromSmarts(smarts)
        for prods in rxn.RunReactants((mol,)):
            for p in prods:
                yield from _emit(Chem.Mol(p))


@lru_cache(maxsize=512)
def _pieces(smiles: str, halides: tuple[str, ...]) -> tuple[str, ...]:
    mol = Chem.MolFromSmiles(smiles)
    if mol is None or mol.GetNumAtoms() > MAX_ATOMS:
        return ()
    mol = Chem.Mol(mol)
    Chem.Kekulize(mol, clearAromaticFlags=True)
    found = [*_spent(Chem.MolFromSmiles(smiles)), *_cut_pieces(mol, halides), *_without_one_atom(mol)]
    return tuple(dict.fromkeys(found))


def leftover_molecules(reactants: Sequence[str]) -> list[str]:
    """The candidate leftover molecules of a SMILES reaction's reactants (see the module's text), spent reagents
    first, each once, none a reactant itself."""
    halides = tuple(h for h in HALIDES if any(try_canonical(r) in (h, f"[{h}-]") for r in reactants))
    own = {try_canonical(r) for r in reactants}
    out: dict[str, None] = {}
    for r in reactants:
        for piece in _pieces(r, halides):
            if piece not in own:
                out[piece] = None
    return list(out)


def close_with_leftover(reactants: Sequence[str], products: Sequence[str]) -> Completion | None:
    """The smallest balancing of ``reactants -> products + X`` over the candidates X of
    :func:`leftover_molecules` (every reactant consumed, every product made), or ``None``."""
    r_comp = {m: composition(m, "smiles") for m in dict.fromkeys(reactants)}
    p_comp = {m: composition(m, "smiles") for m in dict.fromkeys(products)}
    taken = {try_canonical(m) for m in products}
    candidates = [x for x in leftover_molecules(reactants) if x not in taken]
    exact = _exact_leftover(r_comp, p_comp, candidates)
    if exact is not None:
        return exact
    found = _smallest(r_comp, p_comp, [(x,) for x in candidates])
    if found is not None:
        return found
    pairs = [(x, y) for x in candidates for y in SMALL] + list(itertools.combinations(SMALL, 2))
    return _smallest(r_comp, p_comp, [p for p in pairs if not taken & set(p)])


def _smallest(r_comp: dict, p_comp: dict, sets: Sequence[tuple[str, ...]]) -> Completion | None:
    """The set of by-products that balances the reaction in exactly one way with the smallest coefficients."""
    best: Completion | None = None
    for names in sets:
        comps = {x: composition(x, "smiles") for x in names}
        if len(comps) != len(names) or set(comps) & set(r_comp):
            continue
        if not _may_close([*r_comp.values(), *p_comp.values(), *comps.values()], len(r_comp)):
            continue  # not the one balancing of these species (a fast screen before the exact algebra)
        done = complete(r_comp, p_comp, comps)
        if done is not None and done.unique and (best is None or sum(map(abs, done.nu)) < sum(map(abs, best.nu))):
            best = done
    return best


def _exact_leftover(r_comp: dict, p_comp: dict, candidates: Sequence[str]) -> Completion | None:
    """The reaction read once (:func:`~.complete.leftover_of_cover`: the fewest reactants that hold one of each
    product) when what it leaves is exactly one candidate, or a multiple of one; every reactant consumed. This
    closes reactions whose species balance in more than one way (an ozonolysis with dimethyl sulfide)."""
    cover = leftover_of_cover(r_comp, p_comp)
    if cover is None:
        return None
    mult, rest = cover
    rest = Counter({k: v for k, v in rest.items() if v})
    if not rest or any(v < 0 for k, v in rest.items() if k != CHARGE_KEY) or not all(mult):
        return None
    g = gcd(*rest.values())
    for x in candidates:
        x_comp = Counter({k: v for k, v in composition(x, "smiles").items() if v})
        for k in range(1, g + 1):
            if g % k == 0 and Counter({e: v * k for e, v in x_comp.items()}) == rest:
                nu = (*(-m for m in mult), *(1 for _ in p_comp), k)
                return Completion((*r_comp, *p_comp, x), nu, False)
    return None
