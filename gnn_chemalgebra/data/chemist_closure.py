"""Closing a dropped USPTO reaction the way a chemist writes it: real by-products, plausible stoichiometry.

:func:`~..algebra.byproducts.close_with_byproducts` keeps the first set of by-products (smallest, commonest first)
that balances with *any* positive integers. On patent records that can be arithmetic rather than chemistry: a methyl
ester hydrolysis recorded without its water "closes" as four esters giving four acids and one isobutene (four CH2),
an acetylation with acetic anhydride as two alcohols giving two acetates and water. :func:`close_plausibly` keeps
that closure only when it is :func:`plausible` (each product made once, small coefficients); otherwise it tries the
same candidate sets in the same order and keeps the first plausible balancing (acetic acid for the acetylation).
:func:`why_not_closed` names what the record lacks when nothing plausible closes it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from ..algebra.balance import species_composition
from ..algebra.byproducts import catalogue, close_with_byproducts, salt_candidates
from ..algebra.complete import complete
from ..chem.composition import CHARGE_KEY

MAX_COEF = 2  # largest coefficient of a reactant or by-product in a plausible closure
TRIAL_ADDED = 1  # by-products tried beside a reactant the record may lack (water, hydrogen, oxygen)

MISSING_ATOMS = "missing_reactant_atoms"  # a product holds an element no reactant has
MISSING_COUNTER_ION = "missing_counter_ion"
MISSING_WATER = "missing_water"
MISSING_REDUCTANT = "missing_reductant"
MISSING_OXIDANT = "missing_oxidant"
NO_REAL_BYPRODUCT = "no_real_byproduct"
IMPLAUSIBLE = "implausible_stoichiometry"  # closes only with a product made twice or large multiples
ADDED_REACTANTS = ((MISSING_WATER, "O"), (MISSING_REDUCTANT, "[H][H]"), (MISSING_OXIDANT, "O=O"))

Closure = tuple[tuple[str, ...], tuple[int, ...]]  # by-products; coefficients of reactants, products, by-products


def plausible(coefficients: Sequence[int], n_reactants: int, n_products: int) -> bool:
    """Each product made once, every reactant and by-product coefficient at most :data:`MAX_COEF` (a reactant with
    coefficient 0 is a spectator the closure leaves as it is)."""
    made = coefficients[n_reactants : n_reactants + n_products]
    others = (*coefficients[:n_reactants], *coefficients[n_reactants + n_products :])
    return all(c == 1 for c in made) and all(c <= MAX_COEF for c in others)


def close_plausibly(reactants: Sequence[str], products: Sequence[str], max_added: int) -> tuple[Closure | None, bool]:
    """The plausible closure (or ``None``) and whether any closure balanced at all (plausible or not)."""
    closure = close_with_byproducts(reactants, products, repr="smiles", max_added=max_added)
    if not closure.ok:
        return None, False
    if plausible(closure.coefficients, len(reactants), len(products)):
        return (closure.byproducts, closure.coefficients), True
    return search_plausible(reactants, products, max_added), True


def _comp(mol: str) -> dict[str, int]:
    return {k: v for k, v in species_composition(mol, "smiles").items() if v}


def _elements(comp: dict[str, int]) -> set[str]:
    return {k for k in comp if k != CHARGE_KEY}


def search_plausible(reactants: Sequence[str], products: Sequence[str], max_added: int) -> Closure | None:
    """The first plausible balancing over the by-product sets of the closure's own candidates (catalogue, then the
    reactants' salts), smallest sets first and commonest first within a size; every reactant consumed."""
    r = {m: _comp(m) for m in reactants}
    p = {m: _comp(m) for m in products}
    pool = dict.fromkeys((*catalogue("smiles", inorganic=not products), *salt_candidates(reactants, "smiles")))
    supplied = set().union(*(_elements(c) for c in r.values()))
    cands = {m: _comp(m) for m in pool if m not in r and m not in p}
    usable = [m for m, c in cands.items() if _elements(c) <= supplied]
    rank = {m: i for i, m in enumerate(usable)}
    made_by_products = set().union(*(_elements(c) for c in p.values()))
    for size in range(1, max_added + 1):
        for names in sorted(itertools.combinations(usable, size), key=lambda s: (sum(rank[m] for m in s), s)):
            if not supplied <= made_by_products.union(*(_elements(cands[m]) for m in names)):
                continue
            done = complete(r, p, {m: cands[m] for m in names})
            if done is not None:
                coefs = tuple(abs(v) for v in done.nu)
                if plausible(coefs, len(r), len(p)):
                    return names, coefs
    return None


def why_not_closed(reactants: Sequence[str], products: Sequence[str], balanced: bool) -> str:
    """Why no plausible closure exists, as a short key for the counts.

    Checked in this order: atoms no reactant has; a counter-ion (a molecule of the reaction is charged); water (a
    hydrolysis), a reductant (hydrogen stands for any hydride or H2) or an oxidant (O2 stands for any), each tried
    by closing again with it as a reactant and :data:`TRIAL_ADDED` by-product. Otherwise ``implausible_stoichiometry``
    when some closure balanced (``balanced``) but none plausibly, else ``no_real_byproduct``."""
    comps = {m: _comp(m) for m in (*reactants, *products)}
    supplied = set().union(*(_elements(comps[m]) for m in reactants))
    if set().union(*(_elements(comps[m]) for m in products)) - supplied:
        return MISSING_ATOMS
    if any(c.get(CHARGE_KEY, 0) for c in comps.values()):
        return MISSING_COUNTER_ION
    for reason, added in ADDED_REACTANTS:
        if added not in comps and close_plausibly([*reactants, added], products, TRIAL_ADDED)[0] is not None:
            return reason
    return IMPLAUSIBLE if balanced else NO_REAL_BYPRODUCT
