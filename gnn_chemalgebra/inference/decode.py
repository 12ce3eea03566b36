"""From learned roles/by-products to a balanced target line: nu, extent candidates, xi, source + xi * nu.

No torch here. The exact parts come from ``gnn_chemalgebra.algebra`` (Type-2 posterior, applying an extent);
this module turns the network's per-molecule roles and by-products into the ``nu`` those functions need.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..chem.bag import Term
from ..chem.composition import CHARGE_KEY
from ..chem.formula import write_formula
from ..data.layout import S_IN, S_OUT

N_EXTENT_FEATURES = 7


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


def extent_candidates(groups: Mapping[str, Sequence[int]], nu: Mapping[str, int]) -> list[int]:
    """Every integer extent 1..max that keeps each reactant term non-negative (``[]`` without reactants)."""
    caps = [reactant_cap(groups[m], n) for m, n in nu.items() if n < 0 and m in groups]
    if not caps:
        return []
    return list(range(1, max(min(caps), 0) + 1))


def coef_set(name: str) -> tuple[int, ...]:
    return S_OUT if name == "out" else S_IN


def guess_coef_set(terms: Sequence[Term]) -> str:
    return "out" if any(t.coef > max(S_IN) for t in terms) else "in"


def base_roles(groups: Mapping[str, Sequence[int]], nu: Mapping[str, int]):
    """``algebra.extent.BaseRoles`` from a predicted ``nu`` (spectator terms are reagents)."""
    from ..algebra.extent import BaseRoles

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


def term_roles(terms: Sequence[Term], nu: Mapping[str, int], vtype: int) -> list[str]:
    """One generator role per SOURCE term (reactant / reagent / product) from per-molecule ``nu``.

    The generator writes a molecule that is both reagent and product as SEPARATE terms, so the roles of the
    individual terms matter for the target's layout. Rules: ``nu < 0``: ``|nu|`` terms are reactants, the rest
    reagents; ``nu == 0``: reagents; ``nu > 0`` (product already present): Type 1 sources hold no products, so
    reagents; Type 2 excess product terms carry ``k - k_hat`` < the reagent's ``k``: when a molecule's terms
    differ, the largest are reagents and the others products; when they are equal, up to ``nu`` are products.
    """
    groups = group_terms(terms)
    per_mol: dict[str, list[str]] = {}
    for m, coefs in groups.items():
        n = nu.get(m, 0)
        idx = sorted(range(len(coefs)), key=lambda i: -coefs[i])  # largest first
        roles = ["reagent"] * len(coefs)
        if n < 0:
            for i in idx[:-n]:
                roles[i] = "reactant"
        elif n > 0 and vtype == 2:
            top = coefs[idx[0]]
            if len(set(coefs)) > 1:
                for i in range(len(coefs)):
                    if coefs[i] < top:
                        roles[i] = "product"
            else:
                for i in idx[:n]:
                    roles[i] = "product"
        per_mol[m] = roles
    seen: dict[str, int] = {}
    out = []
    for t in terms:
        j = seen.get(t.mol, 0)
        seen[t.mol] = j + 1
        out.append(per_mol[t.mol][j])
    return out


def extent_posterior(
    terms: Sequence[Term], nu: Mapping[str, int], coef_set_name: str, roles: Sequence[str] | None = None
) -> tuple[list[int], list[float]]:
    """Feasible Type-2 extents and their exact posterior (``algebra.extent.type2_posterior``).

    ``roles`` (one per source term, see :func:`term_roles`) rebuild the base reaction like the generator; without
    them, spectator terms are reagents. When the roles explain no extent (wrong roles), every limiting candidate
    gets equal weight.
    """
    cands, post, _ = extent_posterior_evidence(terms, nu, coef_set_name, roles)
    return cands, post


def extent_posterior_evidence(
    terms: Sequence[Term], nu: Mapping[str, int], coef_set_name: str, roles: Sequence[str] | None = None
) -> tuple[list[int], list[float], float]:
    """:func:`extent_posterior` plus ``log P(source | roles)`` under the generator (``-inf``: inconsistent)."""
    from ..algebra.extent import BaseRoles, log_evidence, type2_weights
    from ..errors import BalanceError

    groups = group_terms(terms)
    try:
        base = BaseRoles.from_meta(terms, roles, nu) if roles is not None else base_roles(groups, nu)
        weights, n_mols = type2_weights(terms, base, coef_set(coef_set_name))
        log_ev = log_evidence(weights, n_mols, coef_set(coef_set_name))
    except BalanceError:
        weights, log_ev = {}, float("-inf")
    if not weights:
        cands = extent_candidates(groups, nu)
        return cands, [1.0 / len(cands)] * len(cands) if cands else [], float("-inf")
    total = sum(weights.values())
    cands = sorted(weights)
    return cands, [float(weights[c] / total) for c in cands], log_ev


def extent_features(
    cands: Sequence[int], groups: Mapping[str, Sequence[int]], nu: Mapping[str, int], post: Sequence[float]
) -> list[list[float]]:
    """Scale-free features of each candidate for the learned scorer (rank, ends, posterior, exhaustion)."""
    n = len(cands)
    if n == 0:
        return []
    caps = [reactant_cap(groups[m], k) for m, k in nu.items() if k < 0 and m in groups]
    pmax = max(post) if post else 1.0
    rows = []
    for i, x in enumerate(cands):
        p = post[i] if post else 1.0 / n
        rows.append(
            [
                float(i == 0),
                float(i == n - 1),
                i / max(n - 1, 1),
                p,
                float(p >= pmax - 1e-12),
                sum(1 for c in caps if c == x) / max(len(caps), 1),
                max(math.log(max(p, 1e-30) / max(pmax, 1e-30)), -10.0) / 10.0,
            ]
        )
    return rows


def apply_extent(
    terms: Sequence[Term],
    nu: Mapping[str, int],
    new_products: Sequence[tuple[str, int]],
    xi: int,
    roles: Sequence[str] | None = None,
) -> list[Term]:
    """target = source + xi * nu via ``algebra.decompose.apply_extent`` (with per-term roles when given, the
    generator's exact layout); on totals if that refuses."""
    from ..algebra.decompose import apply_extent as _apply
    from ..errors import BalanceError

    full = dict(nu)
    for m, n in new_products:
        full[m] = full.get(m, 0) + n
    if xi <= 0:
        return list(terms)
    try:
        return _apply(terms, full, xi, roles)
    except BalanceError:
        pass
    if roles is not None:
        try:
            return _apply(terms, full, xi)
        except BalanceError:
            pass
    out: list[Term] = []
    for m, coefs in group_terms(terms).items():
        tot = sum(coefs) + xi * full.get(m, 0)
        if full.get(m, 0) == 0:
            out += [Term(c, m) for c in coefs]
        elif tot > 0:
            out.append(Term(tot, m))
    for m, n in new_products:
        out += [Term(xi, m)] * max(n, 1)
    return out


@dataclass
class Decoded:
    terms: list[Term]
    nu: dict[str, int]
    new_products: list[tuple[str, int]]
    xi: int
    candidates: list[int]
    posterior: list[float]
    main_product: str | None = None
    uncovered: list[str] = field(default_factory=list)
    balanced: bool = True
    log_evidence: float = 0.0  # Type 2: log P(source | these roles) under the generator; 0 for Type 1


def remainder(nu: Mapping[str, int], comps: Mapping[str, Mapping[str, int]], extras: Sequence[str]) -> Counter:
    """Reactant composition minus present products minus by-products (element view, with net charge)."""
    r: Counter = Counter()
    for m, n in nu.items():
        for k, v in comps[m].items():
            r[k] -= n * v
    for e in extras:
        for k, v in comps[e].items():
            r[k] -= v
    return Counter({k: v for k, v in r.items() if v != 0})


def decode_bag(
    terms: Sequence[Term],
    nu_in: Mapping[str, int],
    extras: Sequence[str],
    comps: Mapping[str, Mapping[str, int]],
    repr: str,
    vtype: int,
    coef_set_name: str,
    *,
    comp_lookup: Mapping[tuple, str] | None = None,
    extent_scorer: Callable[[list[int], list[list[float]]], Sequence[float]] | None = None,
) -> Decoded:
    """Exact part of the pipeline. ``comps`` must cover input molecules and ``extras``.

    Formula: the main product is the exact remainder. SMILES: the remainder is emitted only when its
    composition matches a known by-product (``comp_lookup``); otherwise it is reported as uncovered.
    """
    nu = {m: n for m, n in nu_in.items() if n != 0}
    new: list[tuple[str, int]] = []
    uncovered: list[str] = []
    main = None
    present = {t.mol for t in terms}
    for e in extras:
        if e in present:
            nu[e] = nu.get(e, 0) + 1
        else:
            new.append((e, 1))
    rem = remainder(nu, comps, [m for m, k in new for _ in range(k)])
    balanced = True
    if any(v < 0 for k, v in rem.items() if k != CHARGE_KEY):
        balanced = False
        uncovered.append("negative remainder: predicted products exceed reactants")
    elif any(k != CHARGE_KEY for k in rem):
        if repr == "formula":
            main = write_formula(rem)
        else:
            key = tuple(sorted(rem.items()))
            main = (comp_lookup or {}).get(key)
            if main is None:
                balanced = False
                uncovered.append("main product graph (no bond-edit model loaded): " + write_formula(rem))
        if main is not None:
            if main in present:
                nu[main] = nu.get(main, 0) + 1
            else:
                new.append((main, 1))
    elif rem:  # only a net charge left over
        balanced = False
        uncovered.append("charge imbalance")
    groups = group_terms(terms)
    full = dict(nu)
    for m, n in new:
        full[m] = full.get(m, 0) + n
    roles = term_roles(terms, full, vtype)
    cands = extent_candidates(groups, full)
    post: list[float] = []
    log_ev = 0.0
    if not cands:
        xi = 0
    elif vtype == 1:
        from ..algebra.extent import type1_extent

        xi = min(type1_extent(terms), cands[-1])
    else:
        cands, post, log_ev = extent_posterior_evidence(terms, full, coef_set_name, roles)
        scores: Sequence[float] = post
        if cands and extent_scorer is not None:
            scores = extent_scorer(cands, extent_features(cands, groups, full, post))
        xi = cands[max(range(len(cands)), key=lambda i: (scores[i], -i))] if cands else 0
    return Decoded(
        terms=apply_extent(terms, nu, new, xi, roles),
        nu=nu,
        new_products=new,
        xi=xi,
        candidates=cands,
        posterior=post,
        main_product=main,
        uncovered=uncovered,
        balanced=balanced,
        log_evidence=log_ev,
    )
