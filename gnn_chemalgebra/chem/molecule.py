"""One entry point for both representations: validate, canonicalise and weigh a molecule string."""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import Literal

from rdkit.Chem import rdMolDescriptors

from .composition import element_view, smiles_composition
from .formula import parse_formula, write_formula
from .smiles import canonical_smiles, mol_from_smiles

Repr = Literal["smiles", "formula"]
REPRS: tuple[str, ...] = ("smiles", "formula")


def canonical(mol: str, repr: Repr) -> str:
    """Canonical SMILES, or the Hill-ordered formula (re-written, so ``OH2`` becomes ``H2O``)."""
    if repr == "smiles":
        return canonical_smiles(mol)
    return write_formula(parse_formula(mol))


@lru_cache(maxsize=200_000)
def _smiles_elements(smiles: str) -> Counter:
    return element_view(smiles_composition(smiles))


def composition(mol: str, repr: Repr) -> Counter:
    """Element counts plus net charge (``"charge"``): the view in which both representations balance."""
    if repr == "smiles":
        return Counter(_smiles_elements(mol))
    return parse_formula(mol)


def smiles_to_formula(smiles: str) -> str:
    """RDKit's ``CalcMolFormula`` of a SMILES, as the formula variants write molecules."""
    return rdMolDescriptors.CalcMolFormula(mol_from_smiles(smiles))


def detect_repr(mols: list[str]) -> Repr:
    """Guess the representation of molecule strings: formulas parse as formulas, others are SMILES."""
    for m in mols:
        try:
            parse_formula(m)
        except Exception:
            return "smiles"
    # Strings such as "C", "O", "N" are both; a bag made only of those reads as SMILES.
    if all(m.isalpha() and m.isupper() and len(m) <= 2 for m in mols):
        return "smiles"
    return "formula"
