"""RDKit SMILES handling: parsing with clear errors, canonical forms, atom-map stripping."""

from __future__ import annotations

import re
from functools import lru_cache

from rdkit import Chem, RDLogger

from ..errors import ChemistryError
from .text import WHITESPACE, foreign_char

RDLogger.DisableLog("rdApp.*")

_REACTION_ARROW = re.compile(r"(?<!-)>")


def mol_from_smiles(smiles: str, *, sanitize: bool = True) -> Chem.Mol:
    """Parse SMILES or raise :class:`ChemistryError` naming the molecule.

    Stricter than ``Chem.MolFromSmiles``: whitespace is refused (RDKit would silently read ``"C foo"``
    as methane named ``foo``, or a CXSMILES extension), as are NUL bytes and molecules without atoms.
    """
    if not smiles:
        raise ChemistryError("empty SMILES", term=smiles)
    if WHITESPACE.search(smiles):
        raise ChemistryError("whitespace inside a SMILES", term=smiles)
    foreign = foreign_char(smiles)
    if foreign is not None:
        raise ChemistryError(f"{foreign} is not ASCII: a SMILES is written in ASCII", term=smiles)
    if "\x00" in smiles:
        raise ChemistryError("NUL character inside a SMILES", term=smiles)
    if _REACTION_ARROW.search(smiles):  # '->' and '<-' are dative bonds, which RDKit writes
        raise ChemistryError("'>' inside a SMILES: a reaction, not a molecule", term=smiles)
    try:
        mol = Chem.MolFromSmiles(smiles, sanitize=sanitize)
    except Exception as exc:  # RDKit raises instead of returning None on some inputs
        raise ChemistryError(f"RDKit failed on this SMILES: {exc}", term=smiles) from None
    if mol is None:
        raise ChemistryError("RDKit cannot parse or sanitise this SMILES", term=smiles)
    if mol.GetNumAtoms() == 0:
        raise ChemistryError("SMILES has no atoms", term=smiles)
    return mol


@lru_cache(maxsize=8192)
def shared_mol(smiles: str) -> Chem.Mol:
    """:func:`mol_from_smiles`, parsed once per distinct string for every READ-ONLY consumer of a line (input
    reading, atom graphs, compositions, the edit model's reactant graphs ask for the same molecules).

    The same ``Mol`` object comes back each time: callers must not change it (copy it first, as
    ``Chem.Mol(mol)``, ``Chem.RWMol(mol)`` or ``Chem.CombineMols`` do). Refusals are not cached (each call
    raises a fresh :class:`ChemistryError`, as :func:`mol_from_smiles` does)."""
    return mol_from_smiles(smiles)


@lru_cache(maxsize=200_000)
def canonical_smiles(smiles: str) -> str:
    """RDKit canonical SMILES (implicit H; a lone hydrogen stays ``[H]``)."""
    mol = mol_from_smiles(smiles)
    try:
        return Chem.MolToSmiles(mol)
    except Exception as exc:  # pragma: no cover - RDKit writer failures are rare
        raise ChemistryError(f"RDKit cannot write this molecule: {exc}", term=smiles) from None


def try_canonical(smiles: str) -> str | None:
    """Canonical SMILES, or ``None`` when RDKit rejects it (used for predictions)."""
    try:
        return canonical_smiles(smiles)
    except ChemistryError:
        return None


def strip_atom_maps(mol: Chem.Mol) -> Chem.Mol:
    """A copy of ``mol`` without atom-map numbers."""
    out = Chem.Mol(mol)
    for g in range(out.GetNumAtoms()):  # by index: RDKit's Python atom iterator costs more than the work
        out.GetAtomWithIdx(g).SetAtomMapNum(0)
    return out


def unmapped_canonical(mol: Chem.Mol) -> str:
    """Canonical SMILES of a mapped molecule once its maps are removed."""
    return Chem.MolToSmiles(strip_atom_maps(mol))


_MAX_TAUTOMERS = 200  # RDKit's enumeration bound per molecule (its default is 1000): a key, not a census


@lru_cache(maxsize=50_000)
def tautomer_key(smiles: str) -> str:
    """One SMILES for every tautomer and resonance form of a molecule (1H- and 2H-tetrazole, a nitro group written
    charged or not): RDKit's MolStandardize normalisation, then its canonical tautomer. For telling whether two
    lines name the same products; a SMILES RDKit cannot read or standardise is its own key."""
    from rdkit.Chem.MolStandardize import rdMolStandardize

    try:
        mol = rdMolStandardize.Normalize(Chem.Mol(shared_mol(smiles)))
        params = rdMolStandardize.CleanupParameters()
        params.maxTautomers = _MAX_TAUTOMERS
        return Chem.MolToSmiles(rdMolStandardize.TautomerEnumerator(params).Canonicalize(mol))
    except Exception:  # noqa: BLE001 - RDKit raises assorted errors on odd molecules; the string stands for itself
        return smiles
