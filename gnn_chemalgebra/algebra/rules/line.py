"""A rule's reaction written as a line: the exact algebra balances it, the amounts written choose the extent.

The reacting molecules and the products a rule names are balanced by :func:`~..complete.complete` (the smallest
positive integer coefficients; a rule whose species balance in more than one way does not fire). Then, as
``gnnca predict`` reads a user's amounts: the limiting reactant is consumed and the line is ``source + extent * nu``
(the other molecules written back unchanged). A line that states no amounts (every molecule once) but needs more
of some reactant is written as the balanced reaction itself, as a chemist writes an equation; where spectator ions
would then lose their balance with the ions that react, the rule does not fire.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ...chem.bag import Term
from ...chem.molecule import Repr, canonical, composition, smiles_to_formula
from ..balance import format_reaction
from ..complete import complete
from .species import Item


@dataclass(frozen=True)
class RuleLine:
    """A line written by a rule: its name (``neutralisation``, ``combustion``, ...), the terms written, the
    balanced reaction (``a A + b B -> c C``) and the rule's confidence."""

    rule: str
    terms: tuple[Term, ...]
    equation: str
    confidence: float
    products: tuple[str, ...]
    nu: tuple[tuple[str, int], ...]
    extent: int = 1  # how many times the balanced reaction runs on the amounts written

    @property
    def line(self) -> str:
        return ".".join(str(t) for t in self.terms)


def _name(smiles: str, repr: Repr) -> str:
    return smiles if repr == "smiles" else smiles_to_formula(smiles)


def _key(mol: str, repr: Repr) -> str:
    return canonical(mol, repr)


def rule_line(
    items: Sequence[Item],
    name: str,
    consumed: Sequence[Item],
    products: Sequence[str],
    repr: Repr,
    confidence: float,
    stated: bool = True,
    written: bool = False,
) -> RuleLine | None:
    """The line of one rule's reaction (see the module's text), or ``None`` when it does not balance uniquely or
    the amounts written hold less than one reaction. ``stated``: the line states amounts (a bag); a reaction
    SMILES states none, so its reaction is written at the smallest integer coefficients, its reagents as written.
    ``written``: the rule wrote its products atom for atom from the reactants (a reaction template), so the
    smallest balancing is its reaction even where the species balance in more than one way."""
    made = {_name(s, repr): composition(_name(s, repr), repr) for s in dict.fromkeys(products)}
    used = {it.written: it.comp for it in consumed}
    if set(made) & set(used):
        return None
    got = complete(used, made)
    if got is None or not (got.unique or written):
        return None
    nu = dict(zip(got.species, got.nu, strict=True))
    amounts = {it.written: it.amount for it in items}
    extent = min(amounts[m] // -nu[m] for m in used) if stated else 0
    if not stated:
        after = Counter({it.written: it.amount for it in items if it.written not in used})
        scale = 1
    elif extent >= 1:
        after = Counter({m: k + extent * nu.get(m, 0) for m, k in amounts.items()})
        scale = extent
    elif all(k == 1 for k in amounts.values()):
        steps = {-nu[m] for m in used}
        spectators = [it for it in items if it.written not in used]
        if len(steps) > 1 and any(it.comp.get("charge") for it in spectators):
            return None  # the spectator ions would no longer balance the reacting ones
        s = steps.pop() if len(steps) == 1 else 1
        after = Counter({it.written: it.amount * s for it in spectators})
        scale = 1
    else:
        return None
    by_key = {_key(m, repr): m for m in after}
    for m in made:
        k = by_key.get(_key(m, repr), m)
        after[k] += scale * nu[m]
    terms = tuple(Term(k, m) for m, k in after.items() if k > 0)
    if not _balanced(items, terms, repr, extent):
        return None
    nu_out = tuple(nu.items())
    equation = format_reaction(list(got.species), list(got.nu))
    return RuleLine(name, terms, equation, confidence, tuple(made), nu_out, max(extent, 1))


def _balanced(items: Sequence[Item], terms: Sequence[Term], repr: Repr, extent: int) -> bool:
    """The written line holds the source's atoms and charge (a line with amounts), checked again from scratch."""
    if extent < 1:
        return True
    src: Counter = Counter()
    for it in items:
        for el, n in it.comp.items():
            src[el] += it.amount * n
    out: Counter = Counter()
    for t in terms:
        for el, n in composition(t.mol, repr).items():
            out[el] += t.coef * n
    return +src == +out and -src == -out
