"""Balancing chemical equations exactly: parse ``"A + B -> C + D"``, solve ``[A_r | -A_p] x = 0``.

Conventions (documented for users of ``gnnca balance``):

* Arrows: ``->``, ``=>``, ``>>``, ``=``, ``→``; exactly one per equation. With SMILES, ``=`` is a
  double bond, so there it is an arrow only as ``" = "`` (whitespace on both sides); ``=>`` is not one.
* Species are separated by ``" + "`` (a plus sign with whitespace on both sides), so ionic charges
  such as ``Fe+2 + H+`` stay attached. With SMILES, ``.`` also separates species (reaction SMILES).
* Formulas use the textbook notation of :func:`..chem.formula.parse_formula` (``notation="textbook"``):
  groups ``Ca3(PO4)2``, ``K4[Fe(CN)6]``; hydrates ``CuSO4*5H2O``, ``CuSO4·5H2O`` or ``CuSO4.5H2O`` (``.`` is
  not a species separator for formulas); charges ``Fe+3``, ``Fe3+``, ``SO4^2-``, ``SO4{2-}``, ``SO4-2``,
  ``MnO4-``, ``NH4+`` (digits before the sign are the charge only after a single element or one bracketed
  group: ``Fe3+`` is iron(III), ``NH4+`` ammonium; write azide as ``N3^-``). ``e-`` is an electron.
  A trailing state symbol ``(s)``, ``(l)``, ``(g)`` or ``(aq)`` is kept in the output and ignored by the
  algebra (lower case, so it never reads as a group of elements).
* Leading coefficients (``2H2O``, ``2 H2O``) are **ignored**: the balancer computes every coefficient,
  and :attr:`Equation.given` keeps what was written so a caller can mention it. A formula or SMILES
  never starts with a digit, so this is unambiguous.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from ..chem.composition import CHARGE_KEY
from ..chem.formula import parse_formula
from ..chem.molecule import Repr, composition
from ..errors import BalanceError, InputError
from .matrix import element_matrix, integer_nullspace

_ARROW = re.compile(r"\s*(?:->|=>|>>|→|=)\s*")
# SMILES use '=' for double bonds: there '=' is an arrow only with whitespace on both sides.
_ARROW_SMILES = re.compile(r"\s*(?:->|>>|→)\s*|\s+=\s+")
_PLUS = re.compile(r"\s+\+\s+")
_LEADING = re.compile(r"^(\d+)\s*(?=\S)")
_HYDRATE_DOT = re.compile(r"\s*([*·•⋅])\s*(\d*)\s*")  # "CuSO4 · 5 H2O" -> "CuSO4·5H2O"
ELECTRON = ("e-", "e", "e^-", "e{-}", "e⁻", "e−")
_STATE = re.compile(r"\((?:s|l|g|aq)\)$")  # H2O(l), Cu2+(aq): textbook state symbols


@dataclass(frozen=True)
class Equation:
    """A parsed, unbalanced equation; ``given`` holds user-written leading coefficients (or None)."""

    reactants: list[str]
    products: list[str]
    given: list[int | None] = field(default_factory=list)


@dataclass(frozen=True)
class Balanced:
    """Result of :func:`balance`.

    ``coefficients`` (reactants then products, all positive) is set when the balancing is unique up to
    scale; otherwise ``basis`` lists independent reactions as signed vectors (negative = consumed),
    one entry per species in the same order.
    """

    reactants: list[str]
    products: list[str]
    coefficients: list[int] | None
    basis: list[list[int]]

    @property
    def unique(self) -> bool:
        return self.coefficients is not None

    def format(self) -> str:
        """The balanced equation, or one line per independent reaction when underdetermined."""
        species = self.reactants + self.products
        if self.coefficients is not None:
            n = len(self.reactants)
            return (
                format_side(self.reactants, self.coefficients[:n])
                + " -> "
                + format_side(self.products, self.coefficients[n:])
            )
        return "\n".join(format_reaction(species, nu) for nu in self.basis)


def format_side(mols: list[str], coefs: list[int]) -> str:
    return " + ".join(f"{c} {m}" if c != 1 else m for m, c in zip(mols, coefs, strict=True))


def format_reaction(species: list[str], nu: list[int]) -> str:
    """``nu`` signed (negative = consumed) -> ``"a A + b B -> c C"``; zero entries are left out."""
    left = [(m, -n) for m, n in zip(species, nu, strict=True) if n < 0]
    right = [(m, n) for m, n in zip(species, nu, strict=True) if n > 0]
    return (
        format_side([m for m, _ in left], [c for _, c in left])
        + " -> "
        + format_side([m for m, _ in right], [c for _, c in right])
    )


def _split_side(text: str, repr: Repr) -> tuple[list[str], list[int | None]]:
    mols: list[str] = []
    given: list[int | None] = []
    text = text.strip()
    if not text:
        raise InputError("an equation side is empty")
    for part in _PLUS.split(text):
        part = part.strip()
        pieces = part.split(".") if repr == "smiles" else [_HYDRATE_DOT.sub(r"\1\2", part)]
        for piece in pieces:
            piece = piece.strip()
            m = _LEADING.match(piece)
            coef: int | None = None
            if m:
                coef = int(m.group(1))
                piece = piece[m.end() :].strip()
            if not piece:
                raise InputError("empty species (stray '+' or '.')", term=part)
            if " " in piece:
                raise InputError("species contain a space; separate species with ' + '", term=piece)
            mols.append(piece)
            given.append(coef)
    return mols, given


def parse_equation(text: str, repr: Repr = "formula") -> Equation:
    """Split a user equation string into reactant and product species (see module docstring)."""
    parts = (_ARROW_SMILES if repr == "smiles" else _ARROW).split(text.strip())
    if len(parts) != 2:
        raise InputError("an equation needs exactly one arrow ('->', '=>', '>>', '=' or '→')", term=text.strip())
    left, g1 = _split_side(parts[0], repr)
    right, g2 = _split_side(parts[1], repr)
    return Equation(left, right, g1 + g2)


def species_composition(mol: str, repr: Repr) -> Counter:
    """Composition of a species (formulas in textbook notation, a state symbol such as ``(aq)`` ignored); ``e-``
    is an electron (charge -1, no atoms)."""
    if repr == "formula":
        mol = _STATE.sub("", mol) or mol
    if mol in ELECTRON:
        return Counter({CHARGE_KEY: -1})
    if repr == "formula":
        return parse_formula(mol, notation="textbook")
    return composition(mol, repr)


def balance(reactants: list[str], products: list[str], repr: Repr = "formula") -> Balanced:
    """Smallest positive integer coefficients, or a basis of independent reactions.

    Raises :class:`BalanceError` when no balancing with every coefficient positive exists in the
    one-dimensional case, or when only the trivial solution exists.
    """
    if not reactants or not products:
        raise InputError("both sides of an equation need at least one species")
    comps = [species_composition(m, repr) for m in reactants]
    comps += [Counter({k: -v for k, v in species_composition(m, repr).items()}) for m in products]
    _, matrix = element_matrix(comps)
    ncols = len(comps)
    basis = integer_nullspace(matrix, ncols)
    nr = len(reactants)
    if not basis:
        keys = _unbalanceable_keys(reactants, products, repr)
        hint = f" (elements/charge on one side only: {', '.join(keys)})" if keys else ""
        raise BalanceError(f"impossible: no balancing exists for these species{hint}")
    if len(basis) == 1:
        x = basis[0]
        if all(v < 0 for v in x):
            x = [-v for v in x]
        if not all(v > 0 for v in x):
            zero = [m for m, v in zip(reactants + products, x, strict=True) if v == 0]
            why = f"{', '.join(zero)} cannot take part" if zero else "the only balancing needs a negative coefficient"
            raise BalanceError(f"impossible: no balancing with all coefficients positive ({why})")
        return Balanced(list(reactants), list(products), x, [_signed(x, nr)])
    return Balanced(list(reactants), list(products), None, [_signed(x, nr) for x in basis])


def _signed(x: list[int], nr: int) -> list[int]:
    """Solution vector (positive = present on its written side) -> reaction vector (negative = consumed)."""
    return [-v for v in x[:nr]] + list(x[nr:])


def _unbalanceable_keys(reactants: list[str], products: list[str], repr: Repr) -> list[str]:
    left: set[str] = set()
    right: set[str] = set()
    for m in reactants:
        left |= {k for k, v in species_composition(m, repr).items() if v}
    for m in products:
        right |= {k for k, v in species_composition(m, repr).items() if v}
    return sorted(left ^ right)


def balance_equation(text: str, repr: Repr = "formula") -> Balanced:
    """Parse and balance a user equation string."""
    eq = parse_equation(text, repr)
    return balance(eq.reactants, eq.products, repr)
