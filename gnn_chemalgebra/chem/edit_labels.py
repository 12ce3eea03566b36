"""The bond-edit label vocabulary: bond classes, failure causes, :class:`EditLabels` and the RDKit parsing
shared by extraction and application (see :mod:`.edits` for the conventions the labels follow)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rdkit import Chem

from ..errors import ChemistryError
from .smiles import shared_mol

BOND_CLASSES: tuple[str, ...] = ("none", "single", "double", "triple", "aromatic")
NONE, SINGLE, DOUBLE, TRIPLE, AROMATIC = range(5)
CLASS_OF_TYPE = {
    Chem.BondType.SINGLE: SINGLE,
    Chem.BondType.DOUBLE: DOUBLE,
    Chem.BondType.TRIPLE: TRIPLE,
    Chem.BondType.AROMATIC: AROMATIC,
    Chem.BondType.DATIVE: SINGLE,
}
TYPE_OF_CLASS = {
    SINGLE: Chem.BondType.SINGLE,
    DOUBLE: Chem.BondType.DOUBLE,
    TRIPLE: Chem.BondType.TRIPLE,
    AROMATIC: Chem.BondType.AROMATIC,
}
STEREO_E, STEREO_Z, DIR_NONE = Chem.BondStereo.STEREOE, Chem.BondStereo.STEREOZ, Chem.BondDir.NONE
BOND_ORDER = {NONE: 0, SINGLE: 1, DOUBLE: 2, TRIPLE: 3, AROMATIC: 1}

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
    return CLASS_OF_TYPE.get(bond.GetBondType(), SINGLE)


def parse_mol(smiles: str) -> Chem.Mol:
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        raise EditLabelError(CAUSE_PARSE, smiles)
    return mol


def parse_mol_shared(smiles: str) -> Chem.Mol:
    """:func:`parse_mol` for callers that only copy the molecule (``CombineMols``): a string the strict reader
    accepts is :func:`~.smiles.shared_mol`'s parse (the same ``MolFromSmiles`` result, parsed once per line's
    molecules); anything else is read by :func:`parse_mol` exactly as before."""
    try:
        return shared_mol(smiles)
    except ChemistryError:
        return parse_mol(smiles)


def combine_mols(mols: Sequence[Chem.Mol]) -> Chem.Mol:
    out = Chem.Mol()
    for m in mols:
        out = Chem.CombineMols(out, m)
    return out


def candidate_pairs(reactants: Sequence[str], labels: EditLabels) -> list[tuple[int, int, int]]:
    """Dense labels: every existing reactant bond and every formed pair with its product class."""
    combined = combine_mols([Chem.MolFromSmiles(s) for s in reactants])
    out = {}
    for b in combined.GetBonds():
        i, j = sorted((b.GetBeginAtomIdx(), b.GetEndAtomIdx()))
        out[(i, j)] = bond_class(b)
    for i, j, c in labels.bonds:
        out[(i, j)] = c
    return sorted((i, j, c) for (i, j), c in out.items())
