"""Completing a reaction whose products are given: the smallest integer coefficients that balance the reactants,
the given products and a set of by-products exactly, or why no such balancing exists.

Every species keeps the sign its side gives it (reactants consumed: negative; products and by-products made:
positive) and none may be left out (zero). The balancings are the integer points of the element matrix's
nullspace (exact, sympy); when the nullspace has one dimension the answer is its primitive vector, otherwise the
integer points with free coordinates up to a bound are searched for the smallest one (least total coefficient).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import reduce
from math import gcd, lcm

from ..chem.composition import CHARGE_KEY
from ..chem.formula import write_formula
from ..chem.reaction import cover_multipliers
from ..errors import ChemAlgebraError, cut
from .balance import format_reaction
from .matrix import element_matrix, fraction_nullspace

Comp = Mapping[str, int]
SEARCH_POINTS = 5_000  # integer points tried when the balancing is not unique


@dataclass(frozen=True)
class Completion:
    """A balanced reaction: its species (reactants, products, by-products, in that order) and their signed
    coefficients (negative: consumed), primitive; ``unique``: the only balancing up to scale."""

    species: tuple[str, ...]
    nu: tuple[int, ...]
    unique: bool

    def coefficient(self, mol: str) -> int:
        return self.nu[self.species.index(mol)]

    def equation(self) -> str:
        """``a A + b B -> c C + d D``, as ``gnnca balance`` writes it."""
        return format_reaction(list(self.species), list(self.nu))


def smallest_signed_balancing(comps: Sequence[Comp], signs: Sequence[int]) -> tuple[list[int], bool] | None:
    """The integer vector ``v`` with ``sum_i v_i comps_i == 0`` (every element and the charge) and
    ``sign(v_i) == signs[i]`` for every species, with the least ``sum |v_i|`` (then the first in order); and whether
    it is the only balancing up to scale. ``None`` when there is none (or, for a nullspace of two or more dimensions,
    none among the :data:`SEARCH_POINTS` integer points with the smallest free coordinates)."""
    if len(comps) != len(signs) or any(s not in (-1, 1) for s in signs):
        raise ValueError("one sign (-1 or +1) per species")
    _, rows = element_matrix(comps)
    n = len(comps)
    if not rows:
        return None
    pivots, basis = fraction_nullspace(rows, n)  # exact, as sympy's rref/nullspace, without its import cost
    free = [j for j in range(n) if j not in pivots]
    if not basis:
        return None
    if len(basis) == 1:
        v = _integral(basis[0])
        for flip in (1, -1):
            w = [flip * x for x in v]
            if all(x * s > 0 for x, s in zip(w, signs, strict=True)):
                return w, True
        return None
    bound = max(1, int(SEARCH_POINTS ** (1 / len(free))))
    best: list[int] | None = None
    for mags in itertools.product(range(1, bound + 1), repeat=len(free)):
        t = [m * signs[j] for m, j in zip(mags, free, strict=True)]
        v = _integral([sum(tk * b[i] for tk, b in zip(t, basis, strict=True)) for i in range(n)])
        if all(x * s > 0 for x, s in zip(v, signs, strict=True)) and (
            best is None or (sum(map(abs, v)), v) < (sum(map(abs, best)), best)
        ):
            best = v
    return (best, False) if best is not None else None


def _integral(vec: Sequence[Fraction]) -> list[int]:
    """A rational vector scaled by a positive factor to integers with gcd 1 (signs kept)."""
    den = reduce(lcm, (x.denominator for x in vec), 1)
    ints = [int(x * den) for x in vec]
    g = reduce(gcd, (abs(x) for x in ints), 0)
    return [x // g for x in ints] if g else ints


def complete(
    reactants: Mapping[str, Comp], products: Mapping[str, Comp], byproducts: Mapping[str, Comp] | None = None
) -> Completion | None:
    """The smallest balancing that consumes every reactant and makes every product and by-product (``None``: none).
    A by-product that is also a reactant or product is refused (a molecule has one role)."""
    byproducts = byproducts or {}
    if any(m in reactants or m in products for m in byproducts):
        return None
    species = (*reactants, *products, *byproducts)
    comps = [*reactants.values(), *products.values(), *byproducts.values()]
    signs = [-1] * len(reactants) + [1] * (len(products) + len(byproducts))
    found = smallest_signed_balancing(comps, signs)
    if found is None:
        return None
    nu, unique = found
    return Completion(species, tuple(nu), unique)


def leftover_of_cover(reactants: Mapping[str, Comp], products: Mapping[str, Comp]) -> tuple[list[int], Counter] | None:
    """The smallest reactant multipliers whose atoms hold one of each product (see
    :func:`~gnn_chemalgebra.chem.reaction.cover_multipliers`) and what they leave over (atoms and net charge, zeros
    dropped): the by-product that completes the line read once. ``None`` when a product element is in no reactant."""
    mult = cover_multipliers(list(reactants.values()), list(products.values()))
    if mult is None:
        return None
    left: Counter = Counter()
    for k, comp in zip(mult, reactants.values(), strict=True):
        for key, v in comp.items():
            left[key] += k * v
    for comp in products.values():
        for key, v in comp.items():
            left[key] -= v
    return mult, Counter({k: v for k, v in left.items() if v})


def why_unbalanced(
    reactants: Mapping[str, Comp], products: Mapping[str, Comp], tried: Sequence[str] = (), limit: int = 6
) -> str:
    """Why no balancing consumes every reactant and makes every product with the by-products ``tried``: the
    elements that do not balance, and what the smallest covering of the products leaves over."""
    supplied = {k for c in reactants.values() for k, v in c.items() if v and k != CHARGE_KEY}
    wanted = {k for c in products.values() for k, v in c.items() if v and k != CHARGE_KEY}
    missing = sorted(wanted - supplied)
    if missing:
        return f"cannot be balanced: the products hold {', '.join(missing)}, which no reactant supplies"
    cover = leftover_of_cover(reactants, products)
    shown = ", ".join(cut(m, 40) for m in tried[:limit]) + (
        f" and {len(tried) - limit} more" if len(tried) > limit else ""
    )
    closes = f"none of the by-products tried ({shown}) closes it" if tried else "no by-product closes it"
    if cover is None:  # pragma: no cover - the elements above cover this
        return "cannot be balanced"
    mult, left = cover
    species = [*reactants, *products]
    eq = cut(format_reaction(species, [-k for k in mult] + [1] * len(products)), 160)
    atoms = {k: v for k, v in left.items() if k != CHARGE_KEY}
    if not atoms:
        charge = left.get(CHARGE_KEY, 0)
        return f"cannot be balanced: the charge does not balance ({eq} leaves a charge of {charge:+d}); {closes}"
    try:
        written = cut(write_formula(left), 80)
    except ChemAlgebraError:
        written = cut(", ".join(f"{k}{v}" for k, v in sorted(atoms.items())), 80)
    elements = ", ".join(sorted(atoms))
    verb = "does" if len(atoms) == 1 else "do"
    return f"cannot be balanced: {elements} {verb} not balance ({eq} leaves {written}); {closes}"
