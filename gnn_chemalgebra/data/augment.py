"""Stoichiometric augmentation (benchmark page, section 3): Type 1 and Type 2 draws with their sidecar.

Pure Python and seeded by the caller's ``random.Random``; every draw also returns the facts training needs
(roles, base reaction ``nu`` and extent ``xi``) and is checked against ``target = source + xi * nu``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..algebra.roles import PRODUCT, REACTANT, REAGENT
from ..chem.bag import Term, bag_totals, format_bag


@dataclass(frozen=True)
class BaseReaction:
    """A balanced base reaction in one representation (SMILES or formulas)."""

    reactants: tuple[str, ...]
    reagents: tuple[str, ...]
    products: tuple[str, ...]

    def nu(self) -> dict[str, int]:
        """Per molecule string: product occurrences minus reactant occurrences (zeros dropped)."""
        out: dict[str, int] = {}
        for m in self.reactants:
            out[m] = out.get(m, 0) - 1
        for m in self.products:
            out[m] = out.get(m, 0) + 1
        return {m: n for m, n in out.items() if n != 0}

    def distinct(self) -> list[str]:
        """Distinct molecule strings in first-seen order (reactants, reagents, products)."""
        return list(dict.fromkeys((*self.reactants, *self.reagents, *self.products)))


@dataclass(frozen=True)
class Draw:
    src: list[Term]
    tgt: list[Term]
    src_roles: list[str]
    tgt_roles: list[str]
    xi: int
    k: dict[str, int]


def _shuffled(terms: list[tuple[Term, str]], rng: random.Random) -> tuple[list[Term], list[str]]:
    rng.shuffle(terms)
    return [t for t, _ in terms], [r for _, r in terms]


def draw_type1(rxn: BaseReaction, coef_set: Sequence[int], rng: random.Random) -> Draw:
    """One k for every term on both sides."""
    k = rng.choice(list(coef_set))
    src = [(Term(k, m), REACTANT) for m in rxn.reactants] + [(Term(k, m), REAGENT) for m in rxn.reagents]
    tgt = [(Term(k, m), PRODUCT) for m in rxn.products] + [(Term(k, m), REAGENT) for m in rxn.reagents]
    s, sr = _shuffled(src, rng)
    t, tr = _shuffled(tgt, rng)
    return Draw(s, t, sr, tr, k, {m: k for m in rxn.distinct()})


def draw_type2(rxn: BaseReaction, coef_set: Sequence[int], rng: random.Random) -> Draw:
    """Independent k per distinct string, extent k_hat uniform in 1..min k (the released generator's rule)."""
    choices = list(coef_set)
    k = {m: rng.choice(choices) for m in rxn.distinct()}
    k_hat = rng.randint(1, min(k.values()))
    src = [(Term(k[m], m), REACTANT) for m in rxn.reactants]
    src += [(Term(k[m], m), REAGENT) for m in rxn.reagents]
    src += [(Term(k[m] - k_hat, m), PRODUCT) for m in rxn.products if k[m] - k_hat > 0]
    tgt = [(Term(k[m], m), PRODUCT) for m in rxn.products]
    tgt += [(Term(k[m], m), REAGENT) for m in rxn.reagents]
    tgt += [(Term(k[m] - k_hat, m), REACTANT) for m in rxn.reactants if k[m] - k_hat > 0]
    s, sr = _shuffled(src, rng)
    t, tr = _shuffled(tgt, rng)
    return Draw(s, t, sr, tr, k_hat, k)


def check_identity(draw: Draw, nu: dict[str, int]) -> bool:
    """``totals(tgt) == totals(src) + xi * nu`` for every molecule string."""
    src, tgt = bag_totals(draw.src), bag_totals(draw.tgt)
    for m in set(src) | set(tgt) | set(nu):
        if tgt.get(m, 0) != src.get(m, 0) + draw.xi * nu.get(m, 0):
            return False
    return True


def draw_record(draw: Draw, rxn_id: int, bal_split: str, coef_set_name: str, nu: dict[str, int]) -> dict[str, Any]:
    """The sidecar (meta) record of one generated line; see ``data.layout``."""
    return {
        "rxn": rxn_id,
        "bal_split": bal_split,
        "set": coef_set_name,
        "xi": draw.xi,
        "k": draw.k,
        "src_roles": draw.src_roles,
        "tgt_roles": draw.tgt_roles,
        "nu": [[m, n] for m, n in nu.items()],
    }


def draw_lines(draw: Draw) -> tuple[str, str]:
    return format_bag(draw.src), format_bag(draw.tgt)
