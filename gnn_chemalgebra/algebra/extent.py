"""Extents of reaction: Type 1 is read off the input, Type 2 is a posterior over the generator.

Type 2 generator (benchmark page, section 3): ``k_m ~ U(S)`` per distinct molecule string,
``k_hat ~ U{1..min_m k_m}``; source = reactants and reagents with ``k_m`` plus products with
``k_p - k_hat`` when positive. Given the source and the base reaction, each candidate ``k_hat``
fixes every ``k_m`` (a product absent from the source must have ``k_p = k_hat``), so the posterior
weight of ``k_hat`` is ``|S|^-|M| / min_m k_m`` when consistent; the ``|S|^-|M|`` factor cancels.
All arithmetic is exact (:class:`fractions.Fraction`).

This module is the whole extent rule: the coefficient sets, the posterior and its evidence, and the candidates
and per-term roles the decoder derives from a predicted ``nu`` (the learned scorer's features of those
candidates are data, in :mod:`gnn_chemalgebra.data.featurize`).
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
from .roles import PRODUCT, REACTANT, REAGENT

Posterior = dict[int, Fraction]

# The benchmark's coefficient sets: S_in (train, valid, test_in) and S_out (test_out, out of distribution).
S_IN: tuple[int, ...] = (1, 2, 3, 4, 5)
S_OUT: tuple[int, ...] = (6, 7, 8, 9, 10)


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


# --------------------------------------------------------------------------------------------------------
# From a predicted nu (per distinct molecule) to extent candidates, per-term roles and the posterior.


def coef_set(name: str) -> tuple[int, ...]:
    """The coefficient set called ``name`` ("in" or "out")."""
    return S_OUT if name == "out" else S_IN


def guess_coef_set(terms: Sequence[Term]) -> str:
    """``"out"`` when a coefficient lies beyond S_in (a free input line has no declared set), else ``"in"``."""
    return "out" if any(t.coef > max(S_IN) for t in terms) else "in"


def group_terms(terms: Sequence[Term]) -> dict[str, list[int]]:
    """Coefficients of each molecule's terms, molecules in first-seen order."""
    out: dict[str, list[int]] = {}
    for t in terms:
        out.setdefault(t.mol, []).append(t.coef)
    return out


def reactant_cap(coefs: Sequence[int], n: int) -> int:
    """Largest extent a reactant with these source terms and nu = n < 0 allows."""
    if len(coefs) == abs(n):
        return min(coefs)
    return sum(coefs) // abs(n)


UNIFORM_MAX = 1000  # a uniform fallback posterior is listed up to this many extents; beyond, [] stands for it


def extent_candidates(groups: Mapping[str, Sequence[int]], nu: Mapping[str, int]) -> range:
    """Every integer extent 1..max that keeps each reactant term non-negative (empty without reactants). A
    ``range``, not a list: with coefficients in the millions (``--max-coef 0``) a list would fill the memory."""
    caps = [reactant_cap(groups[m], n) for m, n in nu.items() if n < 0 and m in groups]
    if not caps:
        return range(0)
    return range(1, max(min(caps), 0) + 1)


def base_roles(groups: Mapping[str, Sequence[int]], nu: Mapping[str, int]) -> BaseRoles:
    """:class:`BaseRoles` from a predicted ``nu`` (spectator terms are reagents)."""
    reactants: list[str] = []
    reagents: list[str] = []
    products: list[str] = []
    for m, coefs in groups.items():
        n = nu.get(m, 0)
        if n < 0:
            reactants += [m] * -n
            reagents += [m] * max(len(coefs) + n, 0)
        elif n == 0:
            reagents += [m] * len(coefs)
    for m, n in nu.items():
        if n > 0:
            products += [m] * n
    return BaseRoles.of(reactants, reagents, products)


def term_roles(
    terms: Sequence[Term], nu: Mapping[str, int], vtype: int, groups: Mapping[str, Sequence[int]] | None = None
) -> list[str]:
    """One generator role per SOURCE term (reactant / reagent / product) from per-molecule ``nu``.

    The generator writes a molecule that is both reagent and product as SEPARATE terms, so the roles of the
    individual terms matter for the target's layout. Rules: ``nu < 0``: ``|nu|`` terms are reactants, the rest
    reagents; ``nu == 0``: reagents; ``nu > 0`` (product already present): Type 1 sources hold no products, so
    reagents; Type 2 excess product terms carry ``k - k_hat`` < the reagent's ``k``: when a molecule's terms
    differ, the largest are reagents and the others products; when they are equal, up to ``nu`` are products.
    ``groups``: :func:`group_terms` of ``terms``, when the caller has it already.
    """
    if groups is None:
        groups = group_terms(terms)
    per_mol: dict[str, list[str]] = {}
    for m, coefs in groups.items():
        n = nu.get(m, 0)
        if len(coefs) == 1:  # one term (the common case): the rules below, without the sort
            per_mol[m] = [REACTANT if n < 0 else PRODUCT if n > 0 and vtype == 2 else REAGENT]
            continue
        idx = sorted(range(len(coefs)), key=lambda i: -coefs[i])  # largest first
        roles = [REAGENT] * len(coefs)
        if n < 0:
            for i in idx[:-n]:
                roles[i] = REACTANT
        elif n > 0 and vtype == 2:
            top = coefs[idx[0]]
            if len(set(coefs)) > 1:
                for i in range(len(coefs)):
                    if coefs[i] < top:
                        roles[i] = PRODUCT
            else:
                for i in idx[:n]:
                    roles[i] = PRODUCT
        per_mol[m] = roles
    seen: dict[str, int] = {}
    out = []
    for t in terms:
        roles = per_mol[t.mol]
        if len(roles) == 1:
            out.append(roles[0])
            continue
        j = seen.get(t.mol, 0)
        seen[t.mol] = j + 1
        out.append(roles[j])
    return out


def extent_posterior(
    terms: Sequence[Term], nu: Mapping[str, int], coef_set_name: str, roles: Sequence[str] | None = None
) -> tuple[Sequence[int], list[float]]:
    """Feasible Type-2 extents and their exact posterior (:func:`type2_posterior`), as floats.

    ``roles`` (one per source term, see :func:`term_roles`) rebuild the base reaction like the generator; without
    them, spectator terms are reagents. When the roles explain no extent (wrong roles), every limiting candidate
    gets equal weight.
    """
    cands, post, _ = extent_posterior_evidence(terms, nu, coef_set_name, roles)
    return cands, post


def extent_posterior_evidence(
    terms: Sequence[Term], nu: Mapping[str, int], coef_set_name: str, roles: Sequence[str] | None = None
) -> tuple[Sequence[int], list[float], float]:
    """:func:`extent_posterior` plus ``log P(source | roles)`` under the generator (``-inf``: inconsistent)."""
    groups = group_terms(terms)
    try:
        base = BaseRoles.from_meta(terms, roles, nu) if roles is not None else base_roles(groups, nu)
        weights, n_mols = type2_weights(terms, base, coef_set(coef_set_name))
        log_ev = log_evidence(weights, n_mols, coef_set(coef_set_name))
    except BalanceError:
        weights, log_ev = {}, float("-inf")
    if not weights:  # every feasible extent alike; listed only when short (``[]`` then stands for uniform)
        cands = extent_candidates(groups, nu)
        uniform = [1.0 / len(cands)] * len(cands) if 0 < len(cands) <= UNIFORM_MAX else []
        return list(cands) if len(cands) <= UNIFORM_MAX else cands, uniform, float("-inf")
    total = sum(weights.values())
    cands = sorted(weights)
    return cands, [float(weights[c] / total) for c in cands], log_ev


__all__ = [
    "S_IN",
    "S_OUT",
    "UNIFORM_MAX",
    "BaseRoles",
    "base_roles",
    "bayes_em",
    "bayes_extent",
    "candidates",
    "coef_set",
    "extent_candidates",
    "extent_posterior",
    "extent_posterior_evidence",
    "group_terms",
    "guess_coef_set",
    "limiting_extent",
    "log_evidence",
    "reactant_cap",
    "term_roles",
    "type1_extent",
    "type2_log_evidence",
    "type2_posterior",
    "type2_weights",
]
