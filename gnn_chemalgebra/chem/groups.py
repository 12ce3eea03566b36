"""Functional groups of a molecule by SMARTS: which reactive groups a reaction's reactants carry.

A short table of the groups organic chemists name when they classify a reaction (acyl halide, amine, boronic
acid, ...). :func:`functional_groups` returns the indices of the groups a SMILES contains, so a reactant set can
be compared with the reactant sets of the training reactions ("has the model seen a boronic acid react with an
aryl bromide?"). Matching uses RDKit substructure search on the parsed molecule; unparsable SMILES have none.
"""

from __future__ import annotations

from functools import lru_cache

from rdkit import Chem

from ..errors import ChemistryError
from .smiles import shared_mol

# (name, SMARTS); order is part of the saved index format (group i is GROUPS[i]): append, never reorder.
GROUPS: tuple[tuple[str, str], ...] = (
    ("acyl halide", "[CX3](=O)[F,Cl,Br,I]"),
    ("carboxylic acid", "[CX3](=O)[OX2H1,OX1-]"),
    ("ester", "[CX3](=O)[OX2][#6]"),
    ("amide", "[CX3](=O)[NX3]"),
    ("anhydride", "[CX3](=O)[OX2][CX3](=O)"),
    ("aldehyde", "[CX3H1](=O)[#6]"),
    ("ketone", "[#6][CX3](=O)[#6]"),
    ("primary amine", "[NX3;H2][CX4,c]"),
    ("secondary amine", "[NX3;H1]([#6])[#6]"),
    ("tertiary amine", "[NX3;H0;!$(NC=O);!$(N=*);!$(N#*);!$(N-[!#6])]([#6])([#6])[#6]"),
    ("aniline", "[NX3;H2,H1]c"),
    ("alcohol", "[OX2H][CX4]"),
    ("phenol", "[OX2H]c"),
    ("ether", "[OD2]([#6])[#6]"),
    ("thiol", "[SX2H]"),
    ("alkyl halide", "[CX4][Cl,Br,I]"),
    ("aryl halide", "c[Cl,Br,I]"),
    ("aryl fluoride", "cF"),
    ("alkene", "[CX3]=[CX3]"),
    ("alkyne", "[CX2]#[CX2]"),
    ("nitrile", "[CX2]#[NX1]"),
    ("nitro", "[$([NX3](=O)=O),$([NX3+](=O)[O-])]"),
    ("azide", "[$(N=[N+]=[N-]),$([N-][N+]#N)]"),
    ("isocyanate", "N=C=O"),
    ("boronic acid or ester", "[BX3]([OX2])[OX2]"),
    ("sulfonyl halide", "[SX4](=O)(=O)[F,Cl,Br,I]"),
    ("sulfonamide", "[SX4](=O)(=O)[NX3]"),
    ("sulfonate ester", "[SX4](=O)(=O)[OX2][#6]"),
    ("epoxide", "C1OC1"),
    ("carbamate", "[NX3][CX3](=O)[OX2][#6]"),
    ("urea", "[NX3][CX3](=O)[NX3]"),
    ("hydrazine", "[NX3][NX3]"),
    ("imine", "[CX3]=[NX2][#6,#1]"),
    ("silyl", "[Si]"),
    ("organometallic", "[#6][Li,Mg,Zn,Cu,Sn]"),
    ("phosphorus", "[P]"),
    ("heteroaromatic N", "[nX2]"),
    ("aromatic ring", "a1aaaaa1"),
)

_PATTERNS: tuple[Chem.Mol, ...] = tuple(Chem.MolFromSmarts(s) for _, s in GROUPS)


@lru_cache(maxsize=65536)
def functional_groups(smiles: str) -> frozenset[int]:
    """Indices into :data:`GROUPS` of the groups the molecule contains (empty for an unparsable SMILES)."""
    try:
        mol = shared_mol(smiles)
    except ChemistryError:
        return frozenset()
    return frozenset(i for i, patt in enumerate(_PATTERNS) if mol.HasSubstructMatch(patt))


def group_names(indices: frozenset[int] | set[int] | list[int]) -> list[str]:
    """The names of group indices, in table order."""
    return [GROUPS[i][0] for i in sorted(indices)]
