"""Gold bond-edit labels from atom-mapped reactions, and their exact application with RDKit (no torch).

A WLDN/rexgen-style decoder predicts, over the reactant atoms, the product bond order of candidate atom pairs
and per-atom changes of hydrogen count and formal charge. This module derives those labels from a base
reaction's atom-mapped SMILES and applies them back to the reactant graph, so that the labels can be checked
to reproduce the gold products exactly.

The work is split by job: :mod:`.edit_labels` (bond classes, failure causes, :class:`EditLabels`),
:mod:`.edit_extract` (labels from a mapped reaction), :mod:`.edit_apply` (labels applied, products written) and
:mod:`.edit_stereo` (parities); this module names them all in one place and checks a record end to end
(:func:`check_record`, :func:`diagnose`).

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

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from rdkit import Chem

from .edit_apply import (
    ReactantGraph,
    apply_edits,
    apply_edits_components,
    edited_products,
    product_composition,
    reactant_graph,
)
from .edit_extract import extract_labels, gold_products, labels_for_record
from .edit_labels import (
    AROMATIC,
    BOND_CLASSES,
    CAUSE_ATOM_ORDER,
    CAUSE_CHARGE,
    CAUSE_DUPLICATE_MAP,
    CAUSE_H_COUNT,
    CAUSE_NO_MAP,
    CAUSE_OTHER,
    CAUSE_PARSE,
    CAUSE_PRODUCT_MATCH,
    CAUSE_REACTANT_MATCH,
    CAUSE_SANITIZE,
    CAUSE_STEREO,
    CAUSE_UNMAPPED_PRODUCT_ATOM,
    DOUBLE,
    NONE,
    SINGLE,
    TRIPLE,
    EditLabelError,
    EditLabels,
    bond_class,
    candidate_pairs,
)

__all__ = [
    "AROMATIC",
    "BOND_CLASSES",
    "CAUSE_ATOM_ORDER",
    "CAUSE_CHARGE",
    "CAUSE_DUPLICATE_MAP",
    "CAUSE_H_COUNT",
    "CAUSE_NO_MAP",
    "CAUSE_OTHER",
    "CAUSE_PARSE",
    "CAUSE_PRODUCT_MATCH",
    "CAUSE_REACTANT_MATCH",
    "CAUSE_SANITIZE",
    "CAUSE_STEREO",
    "CAUSE_UNMAPPED_PRODUCT_ATOM",
    "DOUBLE",
    "NONE",
    "SINGLE",
    "TRIPLE",
    "EditLabelError",
    "EditLabels",
    "ReactantGraph",
    "apply_edits",
    "apply_edits_components",
    "bond_class",
    "candidate_pairs",
    "check_record",
    "diagnose",
    "edited_products",
    "extract_labels",
    "gold_products",
    "labels_for_record",
    "product_composition",
    "reactant_graph",
]


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
