"""Atom compositions with the benchmark's charge-tagged labels and explicit hydrogens.

A label is the element symbol plus its formal charge: ``O``, ``O-``, ``N+``, ``Fe+2``, ``S-2``.
Counters keep first-seen order, which the leftover-chain rule depends on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from rdkit import Chem

from ..errors import ChemistryError
from .smiles import mol_from_smiles

Composition = Counter  # Counter[str] of atom labels (or, in formula space, element symbols + "charge")

CHARGE_KEY = "charge"


def charge_suffix(charge: int) -> str:
    """``''``, ``'+'``, ``'-'``, ``'+2'``, ``'-3'``: the benchmark's (and CalcMolFormula's) notation."""
    if charge == 0:
        return ""
    sign = "+" if charge > 0 else "-"
    return sign if abs(charge) == 1 else f"{sign}{abs(charge)}"


def atom_label(atom: Chem.Atom) -> str:
    """Element symbol plus formal charge; isotopes are ignored (``[13C]`` is ``C``)."""
    return atom.GetSymbol() + charge_suffix(atom.GetFormalCharge())


def mol_composition(mol: Chem.Mol) -> Counter:
    """Labels of every atom, hydrogens made explicit, in RDKit atom order (H appended after heavy atoms)."""
    mol_h = Chem.AddHs(mol)
    return Counter(atom_label(a) for a in mol_h.GetAtoms())


def smiles_composition(smiles: str) -> Counter:
    """:func:`mol_composition` of a SMILES; :class:`ChemistryError` if RDKit rejects it."""
    return mol_composition(mol_from_smiles(smiles))


def sum_compositions(parts: Iterable[tuple[Mapping[str, int], int]]) -> Counter:
    """Coefficient-weighted sum of compositions, keeping first-seen key order."""
    total: Counter = Counter()
    for comp, k in parts:
        for label, n in comp.items():
            total[label] += n * k
    return total


def split_label(label: str) -> tuple[str, int]:
    """``'Fe+2'`` -> ``('Fe', 2)``; ``'O-'`` -> ``('O', -1)``; ``ChemistryError`` on a malformed label."""
    for i, c in enumerate(label):
        if c in "+-" and i > 0:
            sym, rest = label[:i], label[i + 1 :]
            if rest and not (rest.isascii() and rest.isdigit()):
                raise ChemistryError("malformed atom label", term=label)
            mag = int(rest) if rest else 1
            return sym, mag if c == "+" else -mag
    if not label or label[0] in "+-":
        raise ChemistryError("malformed atom label", term=label)
    return label, 0


def element_view(comp: Mapping[str, int]) -> Counter:
    """Project charge-tagged labels to element counts plus the net charge under ``"charge"``.

    Formulas only know this projection, so formula-mode balance checks use it.
    """
    out: Counter = Counter()
    for label, n in comp.items():
        if label == CHARGE_KEY:
            out[CHARGE_KEY] += n
            continue
        sym, q = split_label(label)
        out[sym] += n
        if q:
            out[CHARGE_KEY] += q * n
    return Counter({k: v for k, v in out.items() if v != 0})
