"""Edit labels applied to the reactant graph with RDKit: the edited, sanitised graph and its components
written as canonical SMILES (products and by-products), with an early verdict on the products' composition."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from rdkit import Chem

from .composition import charge_suffix
from .edit_labels import (
    AROMATIC,
    CAUSE_ATOM_ORDER,
    CAUSE_H_COUNT,
    CAUSE_SANITIZE,
    DIR_NONE,
    NONE,
    STEREO_E,
    STEREO_Z,
    TYPE_OF_CLASS,
    EditLabelError,
    EditLabels,
    combine_mols,
    parse_mol_shared,
)
from .edit_stereo import apply_stereo, perceive_stereo


class ReactantGraph:
    """The reactants of one reaction parsed once, ready for any number of edit sets (see :func:`reactant_graph`).

    ``template`` is the combined reactant graph with every atom's hydrogens made an explicit count
    (``NoImplicit``) and no radical electrons, i.e. :func:`_edited_mol`'s starting point for an empty edit set;
    an edit set copies it and changes only the atoms and bonds it names. ``h``/``charge``/``symbol``: each
    atom's total hydrogens, formal charge and element in the reactants, by global index.
    """

    def __init__(self, reactants: Sequence[str]) -> None:
        mols = [parse_mol_shared(s) for s in reactants]  # only copied, by combine_mols
        self.n_atoms = [m.GetNumAtoms() for m in mols]
        rw = Chem.RWMol(combine_mols(mols))
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
        # the only bonds an edited copy can carry E/Z stereo or a direction on (edits add none; see perceive_stereo)
        self.stereo_pairs = tuple(
            (b.GetBeginAtomIdx(), b.GetEndAtomIdx())
            for b in map(rw.GetBondWithIdx, range(rw.GetNumBonds()))
            if b.GetStereo() in (STEREO_E, STEREO_Z) or b.GetBondDir() != DIR_NONE
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
            rw.AddBond(i, j, TYPE_OF_CLASS[c])
            bond = rw.GetBondBetweenAtoms(i, j)
        else:
            bond.SetBondType(TYPE_OF_CLASS[c])
        bond.SetIsAromatic(c == AROMATIC)
    for g in touched:
        a = rw.GetAtomWithIdx(g)
        a.SetIsAromatic(any(b.GetIsAromatic() for b in a.GetBonds()))
    apply_stereo(rw, labels, touched, use_labels=stereo)
    return rw


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
    (``stereo_pairs``: see :func:`perceive_stereo`)."""
    mol = rw.GetMol()
    try:
        Chem.SanitizeMol(mol)
        perceive_stereo(mol, stereo_pairs)
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
