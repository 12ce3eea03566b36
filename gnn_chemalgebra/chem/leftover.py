"""The benchmark's artificial leftover molecule: a chain of bracket atoms, canonicalised by RDKit."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from rdkit import Chem


def chain_smiles(labels: Iterable[str]) -> str:
    """``['C', 'N'] -> '[C][N]'``: labels in the given order, one bracket atom each, single bonds."""
    labels = list(labels)
    return "[" + "][".join(labels) + "]"


def leftover_molecule(diff: Counter) -> str | None:
    """Canonical SMILES of the chain for a multiset difference, or ``None`` if RDKit rejects it.

    ``diff`` must keep the order in which the side's atoms were met (a ``Counter`` subtraction
    does), because ``Counter.elements()`` emits labels in that order, as the authors' generator did.
    """
    labels = list(diff.elements())
    if not labels:
        return None
    mol = Chem.MolFromSmiles(chain_smiles(labels))
    if mol is None:
        return None
    return Chem.MolToSmiles(mol)
