"""Extents of reaction: Type 1 is read off the input, Type 2 is a posterior over the generator.

Type 2 generator (benchmark page, section 3): ``k_m ~ U(S)`` per distinct molecule string,
``k_hat ~ U{1..min_m k_m}``; source = reactants and reagents with ``k_m`` plus products with
``k_p - k_hat`` when positive. Given the source and the base reaction, each candidate ``k_hat``
fixes every ``k_m`` (a product absent from the source must have ``k_p = k_hat``), so the posterior
weight of ``k_hat`` is ``|S|^-|M| / min_m k_m`` when consistent; the ``|S|^-|M|`` factor cancels.
All arithmetic is exact (:class:`fractions.Fraction`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import reduce
from math import gcd

from ..chem.bag import Term
from ..errors import BalanceError
from .decompose import PRODUCT, REACTANT, REAGENT

Posterior = dict[int, Fraction]


@dataclass(frozen=True)
class BaseRoles:
    """The base reaction's molecule strings with multiplicity (a string may hold several roles)."""

    reactants: tuple[str, ...]
    reagents: tuple[str, ...]
    products: tuple[str, ...]

    @classmethod
    def from_meta(cls, source: Sequence[Term], src_roles: Sequence[str], nu: Mapping[str, int]) -> BaseRoles:
        """Rebuild the base reaction from a source line's roles and ``nu``, without the target.

        Reactant and reagent occurrences always appear in the source; product occurrences of ``m``
        number ``nu[m] + #reactant occurrences of m``.
        """
        reactants = tuple(t.mol for t, r in zip(source, src_roles, strict=True) if r == REACTANT)
        reagents = tuple(t.mol for t, r in zip(source, src_roles, strict=True) if r == REAGENT)
        n_react = Counter(reactants)
        products: list[str] = []
        for m in list(nu) + [m for m in n_react if m not in nu]:
            products.extend([m] * max(0, nu.get(m, 0) + n_react[m]))
        return cls(reactants, reagents, tuple(products))

    @classmethod
    def of(cls, reactants: Iterable[str], reagents: Iterable[str], products: Iterable[str]) -> BaseRoles:
        return cls(tuple(reactants), tuple(reagents), tuple(products))

    def molecules(self) -> list[str]:
        return list(dict.fromkeys(self.reactants + self.reagents + self.products))


def type1_extent(source: Sequence[Term]) -> int:
    """Type 1 writes one k on every term, so the extent is that k (the gcd, to be safe)."""
    k = reduce(gcd, (t.coef for t in source), 0)
    if k == 0:
        raise BalanceError("empty source: no extent")
    return k


def limiting_extent(source_totals: Mapping[str, int], nu: Mapping[str, int]) -> int:
    """Largest extent the source allows: ``min over consumed m of total_m // |nu_m|``."""
    caps = [source_totals.get(m, 0) // -n for m, n in nu.items() if n < 0]
    if not caps:
        raise BalanceError("nu consumes nothing: the extent is unbounded")
    return min(caps)


def _implied_k(obs: list[int], n_fixed: int, n_prod: int, k_hat: int) -> int | None:
    """``k_m`` implied by the sorted observed coefficients of ``m`` for this ``k_hat``, or None."""
    if n_fixed:
        if not obs:
            return None
        k = obs[-1]
        expected = [k] * n_fixed + ([k - k_hat] * n_prod if k > k_hat else [])
    elif obs:
        if len(obs) != n_prod or obs[0] != obs[-1]:
            return None
        k = obs[0] + k_hat
        expected = list(obs)
    else:
        k = k_hat
        expected = []
    if k < k_hat or sorted(expected) != obs:
        return None
    return k


def type2_weights(source: Sequence[Term], base: BaseRoles, coef_set: Iterable[int]) -> tuple[Posterior, int]:
    """Unnormalised ``P(source, k_hat | base reaction, S) * |S|^|M|`` per consistent ``k_hat`` (``1 / min_m k_m``),
    and ``|M|``, the number of distinct molecules of the base reaction. Empty when nothing is consistent."""
    s = frozenset(coef_set)
    obs: dict[str, list[int]] = {}
    for t in source:
        obs.setdefault(t.mol, []).append(t.coef)
    for v in obs.values():
        v.sort()
    mols = base.molecules()
    unknown = [m for m in obs if m not in mols]
    if unknown:
        raise BalanceError(f"source molecules outside the base reaction: {', '.join(unknown)}")
    fixed = Counter(base.reactants) + Counter(base.reagents)
    prods = Counter(base.products)
    weights: dict[int, Fraction] = {}
    for k_hat in range(1, max(s) + 1):
        ks = []
        for m in mols:
            k = _implied_k(obs.get(m, []), fixed[m], prods[m], k_hat)
            if k is None or k not in s:
                break
            ks.append(k)
        else:
            if k_hat <= min(ks):
                weights[k_hat] = Fraction(1, min(ks))
    return weights, len(mols)


def type2_posterior(source: Sequence[Term], base: BaseRoles, coef_set: Iterable[int]) -> Posterior:
    """Exact posterior ``P(k_hat | source, base reaction, S)`` over every feasible ``k_hat``.

    Raises :class:`BalanceError` when no ``k_hat`` explains the source (wrong roles or set).
    """
    weights, _ = type2_weights(source, base, coef_set)
    total = sum(weights.values(), Fraction(0))
    if total == 0:
        raise BalanceError("no extent is consistent with this source, base reaction and coefficient set")
    return {k: w / total for k, w in weights.items()}


def type2_log_evidence(source: Sequence[Term], base: BaseRoles, coef_set: Iterable[int]) -> float:
    """``log P(source | base reaction, S)`` under the Type-2 generator (``-inf`` when no ``k_hat`` explains it).

    This is the exact likelihood of a hypothesis about the roles: it lets the decoder weigh role hypotheses by
    how well the written coefficients fit them (a reagent's coefficient must lie in ``S``; an excess product
    term carries ``k - k_hat``), on top of the coefficient-blind network's probabilities."""
    weights, n_mols = type2_weights(source, base, coef_set)
    return log_evidence(weights, n_mols, coef_set)


def log_evidence(weights: Posterior, n_mols: int, coef_set: Iterable[int]) -> float:
    """``log P(source | base reaction, S)`` from :func:`type2_weights`' output (``-inf`` when empty)."""
    import math

    total = sum(weights.values(), Fraction(0))
    if total == 0:
        return float("-inf")
    return math.log(total) - n_mols * math.log(len(frozenset(coef_set)))


def bayes_extent(posterior: Posterior) -> int:
    """The Bayes-optimal (exact-match) extent: the posterior mode; ties go to the smaller ``k_hat``."""
    return max(sorted(posterior), key=lambda k: posterior[k])


def bayes_em(posterior: Posterior) -> Fraction:
    """Probability that :func:`bayes_extent` is right: the largest posterior mass."""
    return max(posterior.values())


def candidates(posterior: Posterior) -> list[int]:
    """Feasible extents, smallest first."""
    return sorted(posterior)


__all__ = [
    "PRODUCT",
    "REACTANT",
    "REAGENT",
    "BaseRoles",
    "bayes_em",
    "bayes_extent",
    "candidates",
    "limiting_extent",
    "log_evidence",
    "type1_extent",
    "type2_log_evidence",
    "type2_posterior",
    "type2_weights",
]
