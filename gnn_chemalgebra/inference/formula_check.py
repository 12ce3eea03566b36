"""A second reading of a chemist's SMILES line: the same reaction written in formulas, read by a formula model.

The SMILES model's product graph comes from the bond-edit model, whose first graph is wrong on most of the chemist's
lines it gets wrong, while its next graphs often hold the reaction. A formula model reads the same line another way
(what leaves and what remains, by composition), and the two readings agree more often when they are right. With
``decode.formula_check`` naming a formula checkpoint, each SMILES line is also written in formulas and read by it;
among the hypotheses the SMILES decoder searches for a chemist's line (``decode.real_byproduct_beam``), the first
whose line has the same formulas, at the same coefficients, as the formula model's line is written
(:func:`~.byproduct_convention.chemist_result`). Where none agrees the SMILES decoder's own order stands. The
record says whether the line written agrees (``formula_check``); the calibration reads it
(:data:`~gnn_chemalgebra.trust.features.FORMULA_CHECK_FEATURE`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..chem.bag import Term
from ..chem.molecule import canonical, smiles_to_formula
from ..chem.reaction import given_sides
from ..data.dataset import BagExample, example_from_terms
from ..errors import ChemAlgebraError
from .decode import Decoded


@dataclass(frozen=True)
class FormulaReading:
    """The formula model's line for one SMILES line, and its test of a hypothesis (:func:`agreement`)."""

    line: str
    agrees: Callable[[Decoded], bool]


def formula_example(ex: BagExample) -> BagExample | None:
    """``ex`` (a SMILES line) written in formulas, each molecule's coefficient kept; ``None`` for a line with
    given products (completed around them, not read) or a molecule RDKit cannot write as a formula."""
    if given_sides(ex.terms) is not None:
        return None
    try:
        terms = [Term(t.coef, smiles_to_formula(t.mol)) for t in ex.terms]
    except (ChemAlgebraError, ValueError):
        return None
    return example_from_terms(terms, ex.vtype, ex.cset)


def formula_bag(terms: Sequence[Term], repr: str) -> Counter:
    """The molecules of ``terms`` as canonical formulas with their summed coefficients."""
    out: Counter = Counter()
    for t in terms:
        formula = smiles_to_formula(t.mol) if repr == "smiles" else t.mol
        out[canonical(formula, "formula")] += t.coef
    return out


def agreement(formula_terms: Sequence[Term]) -> Callable[[Decoded], bool]:
    """The test of a SMILES hypothesis against the formula model's line: the same formulas at the same
    coefficients."""
    want = formula_bag(formula_terms, "formula")

    def agrees(d: Decoded) -> bool:
        try:
            return formula_bag(d.terms, "smiles") == want
        except (ChemAlgebraError, ValueError):
            return False

    return agrees
