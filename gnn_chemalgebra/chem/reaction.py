"""The sides of a reaction line ``reactants>reagents>products``: the role each molecule was given by where it stands.

By the reaction-SMILES convention a molecule left of the first ``>`` is a reactant, one between the arrows a reagent
(it contributes no atoms: never consumed) and one after the last ``>`` a product. :class:`ReactionSides` holds those
roles; :class:`ReactionTerms` is the source terms of such a line carrying its sides, so that the roles travel with
the terms wherever a parsed line goes (the example built from it, the decoder). Formula lines may use the same
syntax (``C2H3ClO>C6H15N>``).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import InputError
from .bag import Term
from .composition import CHARGE_KEY
from .molecule import Repr, composition

REACTANT_SIDE, REAGENT_SIDE, PRODUCT_SIDE = "reactant", "reagent", "product"
COVER_WORK = 1_000_000  # products of reactant and element counts :func:`cover_multipliers` may check in all


@dataclass(frozen=True, slots=True)
class ReactionSides:
    """The distinct molecules of each side of a reaction line, in written order (canonical, in ``repr``)."""

    reactants: tuple[str, ...]
    reagents: tuple[str, ...]
    products: tuple[str, ...]
    repr: Repr

    def role(self, mol: str) -> str | None:
        """``reactant`` / ``reagent`` / ``product``: the side ``mol`` was written on (``None``: not written)."""
        if mol in self.reagents:
            return REAGENT_SIDE
        if mol in self.reactants:
            return REACTANT_SIDE
        if mol in self.products:
            return PRODUCT_SIDE
        return None


class ReactionTerms(list[Term]):
    """The source terms of a reaction line (reactants then reagents, coefficient 1 each) with its ``sides``."""

    __slots__ = ("sides",)

    def __init__(self, terms: Iterable[Term] = (), sides: ReactionSides | None = None) -> None:
        super().__init__(terms)
        self.sides = sides

    def __reduce__(self) -> tuple:
        return (ReactionTerms, (list(self), self.sides))


def given_sides(terms: Sequence[Term]) -> ReactionSides | None:
    """The sides a reaction line gave its terms (``None``: a bag, whose roles are left to the model)."""
    return getattr(terms, "sides", None)


def _distinct(mols: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(mols))


def make_sides(reactants: Sequence[str], reagents: Sequence[str], products: Sequence[str], repr: Repr) -> ReactionSides:
    """Sides from canonical molecules. Raises :class:`InputError` when a molecule stands on two sides (a molecule has
    one role) or when the products hold an element that no reactant supplies (reagents contribute no atoms), the
    two faults no choice of by-products repairs."""
    sides = ReactionSides(_distinct(reactants), _distinct(reagents), _distinct(products), repr)
    named = ((REACTANT_SIDE, sides.reactants), (REAGENT_SIDE, sides.reagents), (PRODUCT_SIDE, sides.products))
    for (a, ma), (b, mb) in itertools.combinations(named, 2):
        both = [m for m in ma if m in mb]
        if both:
            raise InputError(f"a molecule written as both {a} and {b}: a molecule has one role", term=both[0])
    if sides.products:
        supplied = {k for m in sides.reactants for k, v in composition(m, repr).items() if v and k != CHARGE_KEY}
        wanted = {k for m in sides.products for k, v in composition(m, repr).items() if v and k != CHARGE_KEY}
        missing = sorted(wanted - supplied)
        if missing:
            raise InputError(
                f"cannot be balanced: the products hold {', '.join(missing)}, which no reactant supplies "
                "(molecules between the arrows are reagents and contribute no atoms)"
            )
    return sides


def cover_multipliers(
    reactants: Sequence[Mapping[str, int]], products: Sequence[Mapping[str, int]], work: int = COVER_WORK
) -> list[int] | None:
    """The smallest reactant multipliers (each >= 1, smallest sum, then first in lexicographic order) whose atoms hold
    one of each product: what is left over is the by-product of the line read once. ``None`` when an element of the
    products is in no reactant. Past ``work`` (vectors tried times reactants times elements, which bounds the time
    of a line with many reactants) a greedy cover is returned (not always the smallest)."""
    need: Counter = Counter()
    for p in products:
        need.update({k: v for k, v in p.items() if k != CHARGE_KEY and v})
    keys = sorted(need)
    rows = [[int(r.get(k, 0)) for k in keys] for r in reactants]
    if any(sum(row[j] for row in rows) <= 0 for j in range(len(keys))):
        return None
    n = len(rows)
    if n == 0:
        return None
    tries, done = max(1, work // (n * len(keys))), 0
    for extra in itertools.count():
        for picks in itertools.combinations_with_replacement(range(n), extra):
            mult = [1] * n
            for i in picks:
                mult[i] += 1
            if all(sum(m * row[j] for m, row in zip(mult, rows, strict=True)) >= need[k] for j, k in enumerate(keys)):
                return mult
            done += 1
            if done >= tries:
                return _greedy(rows, keys, need)
    return None  # pragma: no cover - the loop returns


def _greedy(rows: list[list[int]], keys: list[str], need: Mapping[str, int]) -> list[int]:
    """Multipliers that hold the products, found greedily: each element still short is made up by the reactant
    richest in it (a cover, not always the smallest)."""
    mult = [1] * len(rows)
    for j, k in enumerate(keys):
        have = sum(m * row[j] for m, row in zip(mult, rows, strict=True))
        if have < need[k]:
            best = max(range(len(rows)), key=lambda i: rows[i][j])
            mult[best] += -(-(need[k] - have) // rows[best][j])
    return mult
