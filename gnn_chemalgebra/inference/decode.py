"""From learned roles/by-products to a balanced target line: nu, extent candidates, xi, source + xi * nu.

The exact parts come from ``gnn_chemalgebra.algebra`` (the extent rule in ``algebra.extent``, applying an extent
in ``algebra.decompose``); this module turns the network's per-molecule roles and by-products into the ``nu``
those functions need, and the learned scorer's candidate features come from ``data.featurize``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..algebra.decompose import apply_extent as _apply
from ..algebra.extent import (
    extent_candidates,
    extent_posterior_evidence,
    group_terms,
    limiting_extent,
    term_roles,
    type1_extent,
)
from ..chem.bag import Term, bag_totals
from ..chem.composition import CHARGE_KEY
from ..chem.formula import write_formula
from ..data.featurize import extent_features
from ..errors import BalanceError


def apply_extent(
    terms: Sequence[Term],
    nu: Mapping[str, int],
    new_products: Sequence[tuple[str, int]],
    xi: int,
    roles: Sequence[str] | None = None,
) -> list[Term]:
    """target = source + xi * nu via ``algebra.decompose.apply_extent`` (with per-term roles when given, the
    generator's exact layout); on totals if that refuses."""
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
    candidates: Sequence[int]  # a range when long (coefficients in the millions)
    posterior: list[float]
    main_product: str | None = None
    uncovered: list[str] = field(default_factory=list)
    balanced: bool = True
    log_evidence: float = 0.0  # Type 2: log P(source | these roles) under the generator; 0 for Type 1
    main_comp: Counter | None = None  # formula: the remainder that ``main_product`` writes (its composition)
    source: list[Term] | None = None  # a completed reaction line: the amounts it was balanced from (read once)


def remainder(nu: Mapping[str, int], comps: Mapping[str, Mapping[str, int]], extras: Sequence[str]) -> Counter:
    """Reactant composition minus present products minus by-products (element view, with net charge)."""
    r: dict[str, int] = {}
    get = r.get
    for m, n in nu.items():
        for k, v in comps[m].items():
            r[k] = get(k, 0) - n * v
    for e in extras:
        for k, v in comps[e].items():
            r[k] = get(k, 0) - v
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
    extent_rule: str = "bayes",
) -> Decoded:
    """Exact part of the pipeline. ``comps`` must cover input molecules and ``extras``.

    Formula: the main product is the exact remainder. SMILES: the remainder is emitted only when its
    composition matches a known by-product (``comp_lookup``); otherwise it is reported as uncovered.
    ``extent_rule``: ``bayes`` (the benchmark's: Type 1 read off, Type 2 the posterior's mode or the learned
    scorer) or ``limiting`` (the largest extent that leaves no negative total, as for a chemist's amounts).
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
    roles = term_roles(terms, full, vtype, groups)
    cands = extent_candidates(groups, full)
    post: list[float] = []
    log_ev = 0.0
    if not cands:
        xi = 0
    elif extent_rule == "limiting":  # a chemist's amounts: the limiting reactant is consumed
        xi = limiting_extent(bag_totals(terms), full)
        cands = range(1, xi + 1)
    elif vtype == 1:
        xi = min(type1_extent(terms), cands[-1])
    else:
        cands, post, log_ev = extent_posterior_evidence(terms, full, coef_set_name, roles)
        scores: Sequence[float] = post
        if cands and not post:  # a uniform posterior too long to list: its first extent, as the tie-break picks
            xi = cands[0]
        else:
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
        main_comp=rem if main is not None and repr == "formula" else None,
    )


def completed_line(
    terms: Sequence[Term], nu: Mapping[str, int], made: Sequence[tuple[str, int]], main: str | None = None
) -> Decoded:
    """A reaction line completed with its given products and by-products (``made``: molecule, coefficient): the
    line read once. The reactants (``nu`` negative) are consumed in the balancing's amounts, every other source
    term (a reagent) is written as given, the products and by-products follow with their coefficients; the extent
    is 1. A reaction SMILES names species, not amounts, so its written coefficients (1 each) are not amounts here:
    ``source`` holds the amounts the line is balanced from (each reactant at its coefficient, then the reagents)."""
    kept = [t for t in terms if nu.get(t.mol, 0) == 0]
    consumed = [Term(-n, m) for m, n in nu.items() if n < 0]
    return Decoded(
        terms=kept + [Term(k, m) for m, k in made],
        nu={m: n for m, n in nu.items() if n},
        new_products=list(made),
        xi=1,
        candidates=[1],
        posterior=[],
        main_product=main,
        source=consumed + kept,
    )
