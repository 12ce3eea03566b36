"""One entry point for both representations: validate, canonicalise and weigh a molecule string."""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import Literal

from rdkit.Chem import rdMolDescriptors

from ..errors import ChemistryError, InputError
from .composition import element_view, smiles_composition
from .formula import parse_formula, write_formula
from .smiles import canonical_smiles, mol_from_smiles, try_canonical

Repr = Literal["smiles", "formula"]
REPRS: tuple[str, ...] = ("smiles", "formula")


def canonical(mol: str, repr: Repr) -> str:
    """Canonical SMILES, or the Hill-ordered formula (re-written, so ``OH2`` and ``Ca(OH)2`` become ``H2O``
    and ``H2CaO2``: input formulas may use the extended notation of :mod:`.formula`)."""
    if repr == "smiles":
        return canonical_smiles(mol)
    if repr == "formula":
        return _canonical_formula(mol)
    raise InputError(f"unknown representation {repr!r} (expected one of {', '.join(REPRS)})")


@lru_cache(maxsize=200_000)
def _canonical_formula(mol: str) -> str:
    return write_formula(parse_formula(mol, notation="extended"))


@lru_cache(maxsize=200_000)
def _formula_elements(mol: str) -> Counter:
    return parse_formula(mol, notation="extended")


@lru_cache(maxsize=200_000)
def _smiles_elements(smiles: str) -> Counter:
    return element_view(smiles_composition(smiles))


def composition(mol: str, repr: Repr) -> Counter:
    """Element counts plus net charge (``"charge"``): the view in which both representations balance."""
    if repr == "smiles":
        return Counter(_smiles_elements(mol))
    if repr == "formula":
        return Counter(_formula_elements(mol))  # a copy: callers may change theirs; molecules repeat across lines
    raise InputError(f"unknown representation {repr!r} (expected one of {', '.join(REPRS)})")


def smiles_to_formula(smiles: str) -> str:
    """RDKit's ``CalcMolFormula`` of a SMILES, as the formula variants write molecules."""
    return rdMolDescriptors.CalcMolFormula(mol_from_smiles(smiles))


def _is_canonical_formula(m: str) -> bool:
    return write_formula(parse_formula(m, notation="extended")) == m


def detect_repr(mols: list[str]) -> Repr:
    """Guess the representation of molecule strings.

    Formula only if every string parses as a formula and at least one of them is an unambiguous
    formula: one that RDKit cannot read as SMILES (``H2O``, ``C7H4ClNO4``, ``Na+``). Strings that
    are both (``C``, ``CO``, ``Cl``) read as SMILES, and so do SMILES that only happen to parse as
    a non-canonical formula (``CCO``, ``C1CC1``), since the benchmark's formulas are canonical.
    """
    unambiguous = False
    for m in mols:
        try:
            canonical_form = _is_canonical_formula(m)
        except ChemistryError:
            return "smiles"
        if try_canonical(m) is None:
            unambiguous = True
        elif not canonical_form:
            return "smiles"
    return "formula" if unambiguous else "smiles"


def bag_composition(line: str, repr: Repr) -> Counter:
    """Coefficient-weighted composition of a whole ``{k}MOL.{k}MOL`` line (bare terms count once): two sides
    balance when theirs are equal. Raises the project's errors on an unparsable term."""
    from .bag import parse_bag

    total: Counter = Counter()
    for t in parse_bag(line, default_coef=1):
        for k, v in composition(t.mol, repr).items():
            total[k] += t.coef * v
    return Counter({k: v for k, v in total.items() if v})
