"""RDKit SMILES handling: parsing with clear errors, canonical forms, atom-map stripping."""

from __future__ import annotations

from functools import lru_cache

from rdkit import Chem, RDLogger

from ..errors import ChemistryError

RDLogger.DisableLog("rdApp.*")


def mol_from_smiles(smiles: str, *, sanitize: bool = True) -> Chem.Mol:
    """Parse SMILES or raise :class:`ChemistryError` naming the molecule."""
    if not smiles:
        raise ChemistryError("empty SMILES", term=smiles)
    mol = Chem.MolFromSmiles(smiles, sanitize=sanitize)
    if mol is None:
        raise ChemistryError("RDKit cannot parse or sanitise this SMILES", term=smiles)
    return mol


@lru_cache(maxsize=200_000)
def canonical_smiles(smiles: str) -> str:
    """RDKit canonical SMILES (implicit H; a lone hydrogen stays ``[H]``)."""
    return Chem.MolToSmiles(mol_from_smiles(smiles))


def try_canonical(smiles: str) -> str | None:
    """Canonical SMILES, or ``None`` when RDKit rejects it (used for predictions)."""
    try:
        return canonical_smiles(smiles)
    except ChemistryError:
        return None


def strip_atom_maps(mol: Chem.Mol) -> Chem.Mol:
    """A copy of ``mol`` without atom-map numbers."""
    out = Chem.Mol(mol)
    for atom in out.GetAtoms():
        atom.SetAtomMapNum(0)
    return out


def unmapped_canonical(mol: Chem.Mol) -> str:
    """Canonical SMILES of a mapped molecule once its maps are removed."""
    return Chem.MolToSmiles(strip_atom_maps(mol))
