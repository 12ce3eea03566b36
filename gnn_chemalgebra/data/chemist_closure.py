"""Closing a dropped USPTO reaction the way a chemist writes it: real by-products, plausible stoichiometry.

The by-products are those of :mod:`~..algebra.byproducts` (its catalogue, commonest first, then the salts the
reactants' metals can leave). :func:`~..algebra.byproducts.close_with_byproducts` keeps the first set that
balances with *any* positive integers, which on patent records can be arithmetic rather than chemistry: a methyl
ester hydrolysis recorded without its water "closes" as four esters giving four acids and one isobutene (four CH2),
an acetylation with acetic anhydride as two alcohols giving two acetates and water. Here a closure must be
plausible: each product made once, every reactant consumed once or twice (twice only when the products hold its
carbon twice over), each by-product made once or twice. Within
those bounds the search is a plain enumeration of integer compositions (exact, no linear algebra), fast enough for
the 39k dropped reactions: the first set in the catalogue's order (fewest by-products, then commonest) wins, so the
acetylation gives acetic acid. :func:`why_not_closed` names what the record lacks when nothing closes it.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from ..algebra.balance import species_composition
from ..algebra.byproducts import catalogue, salt_candidates
from ..chem.composition import CHARGE_KEY

COEFS = (1, 2)  # coefficients a reactant or by-product may take in a plausible closure (products: 1)
MAX_REACTANTS = 6  # reactant coefficient vectors are enumerated (2**6); more distinct reactants: not closed
TRIAL_ADDED = 2  # by-products tried beside a reactant the record may lack (a Suzuki coupling with water: B(OH)3 + HBr)

MISSING_ATOMS = "missing_reactant_atoms"  # a product holds an element no reactant has
MISSING_COUNTER_ION = "missing_counter_ion"
MISSING_WATER = "missing_water"
MISSING_REDUCTANT = "missing_reductant"
MISSING_OXIDANT = "missing_oxidant"
NO_REAL_BYPRODUCT = "no_real_byproduct"
TOO_MANY_REACTANTS = "too_many_reactants"
ADDED_REACTANTS = ((MISSING_WATER, "O"), (MISSING_REDUCTANT, "[H][H]"), (MISSING_OXIDANT, "O=O"))
TRIAL_COEFS = (1, 2, 3, 4)  # coefficients of the added water, H2 or O2 (a nitro group takes three H2)
REDOX_PAIR = frozenset({"O=O", "[H][H]"})  # never a by-product of a trial (water would "close" a reduction as H2 + O2)

Comp = Mapping[str, int]
Key = tuple[tuple[str, int], ...]
Closure = tuple[tuple[str, ...], tuple[int, ...]]  # by-products; coefficients of reactants, products, by-products


def _comp(mol: str) -> dict[str, int]:
    return {k: v for k, v in species_composition(mol, "smiles").items() if v}


def _elements(comp: Comp) -> set[str]:
    return {k for k in comp if k != CHARGE_KEY}


def _key(comp: Comp) -> Key:
    return tuple(sorted((k, v) for k, v in comp.items() if v))


def _scaled(comp: Comp, c: int) -> dict[str, int]:
    return {k: c * v for k, v in comp.items()}


def _minus(a: Comp, b: Comp) -> dict[str, int] | None:
    """``a - b`` when no count goes negative (charges may: they are signed), else ``None``."""
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) - v
        if out[k] < 0 and k != CHARGE_KEY:
            return None
    return {k: v for k, v in out.items() if v}


def candidates(
    reactants: Sequence[str], products: Sequence[str], exclude: frozenset[str] = frozenset()
) -> list[tuple[str, dict[str, int]]]:
    """The by-products a closure may add, commonest first: the catalogue and the reactants' salts, minus the
    reaction's own molecules, ``exclude`` and any holding an element no reactant supplies."""
    pool = dict.fromkeys((*catalogue("smiles", inorganic=not products), *salt_candidates(reactants, "smiles")))
    supplied = set().union(*(_elements(_comp(m)) for m in reactants))
    out = []
    for m in pool:
        if m in reactants or m in products or m in exclude:
            continue
        c = _comp(m)
        if _elements(c) <= supplied:
            out.append((m, c))
    return out


def close_plausibly(
    reactants: Sequence[str],
    products: Sequence[str],
    max_added: int,
    exclude: frozenset[str] = frozenset(),
    last_coefs: Sequence[int] = COEFS,
) -> Closure | None:
    """The plausible closure with the fewest by-products (at most ``max_added``, none in ``exclude``), commonest
    first, then the fewest reactant multiples; ``None`` when there is none. Exact: every element and the charge
    balance. ``last_coefs``: the coefficients the last reactant may take (a reagent the record lacks, such as the
    three H2 of a nitro reduction)."""
    if len(reactants) > MAX_REACTANTS:
        return None
    r = [_comp(m) for m in reactants]
    made: dict[str, int] = {}
    for m in products:
        for k, v in _comp(m).items():
            made[k] = made.get(k, 0) + v
    pool = candidates(reactants, products, exclude)
    by_key: dict[Key, list[tuple[int, int]]] = {}  # composition of c * by-product -> [(rank, c)]
    for rank, (_, comp) in enumerate(pool):
        for c in COEFS:
            by_key.setdefault(_key(_scaled(comp, c)), []).append((rank, c))
    best: tuple | None = None
    choices = [COEFS] * (len(r) - 1) + [tuple(last_coefs)]
    for cvec in sorted(itertools.product(*choices), key=lambda v: (sum(v), v)):
        if any(c > 1 and c * comp.get("C", 0) > made.get("C", 0) for comp, c in zip(r, cvec, strict=True)):
            continue  # a reactant used twice must fit twice into the products (2 EtOH -> Et2O), not leave as debris
        total: dict[str, int] = {}
        for comp, c in zip(r, cvec, strict=True):
            for k, v in comp.items():
                total[k] = total.get(k, 0) + c * v
        left = _minus(total, made)
        if left is None:
            continue
        for found in _byproduct_sets(left, pool, by_key, max_added):
            score = (len(found), sum(rank for rank, _ in found), sum(cvec), found)
            if best is None or score < best[0]:
                best = (score, cvec)
    if best is None:
        return None
    (_, _, _, found), cvec = best
    names = tuple(pool[rank][0] for rank, _ in found)
    return names, (*cvec, *([1] * len(products)), *(c for _, c in found))


def _byproduct_sets(
    left: Comp, pool: list[tuple[str, dict[str, int]]], by_key: dict[Key, list[tuple[int, int]]], max_added: int
) -> list[tuple[tuple[int, int], ...]]:
    """Every set of at most ``max_added`` (here 0, 1 or 2) by-products, each ``(rank, coefficient)``, whose
    compositions add up to ``left`` exactly."""
    key = _key(left)
    if not key:
        return [()]
    out: list[tuple[tuple[int, int], ...]] = [((rank, c),) for rank, c in by_key.get(key, [])] if max_added else []
    if max_added >= 2:
        for rank, (_, comp) in enumerate(pool):
            for c in COEFS:
                rest = _minus(left, _scaled(comp, c))
                if rest is None or not rest:
                    continue
                out += [((rank, c), (r2, c2)) for r2, c2 in by_key.get(_key(rest), []) if r2 > rank]
    return out


def why_not_closed(reactants: Sequence[str], products: Sequence[str]) -> str:
    """Why no plausible closure exists, as a short key for the counts.

    Checked in this order: more distinct reactants than are enumerated; atoms no reactant has; a counter-ion (a
    molecule of the reaction is charged); water (a hydrolysis), a reductant (hydrogen stands for any hydride or H2)
    or an oxidant (O2 stands for any), each tried by closing again with it as a reactant (up to four of it) and
    :data:`TRIAL_ADDED` by-products (never H2 or O2). Otherwise ``no_real_byproduct``."""
    if len(reactants) > MAX_REACTANTS:
        return TOO_MANY_REACTANTS
    comps = {m: _comp(m) for m in (*reactants, *products)}
    supplied = set().union(*(_elements(comps[m]) for m in reactants))
    if set().union(*(_elements(comps[m]) for m in products)) - supplied:
        return MISSING_ATOMS
    if any(c.get(CHARGE_KEY, 0) for c in comps.values()):
        return MISSING_COUNTER_ION
    for reason, added in ADDED_REACTANTS:
        trial = close_plausibly([*reactants, added], products, TRIAL_ADDED, REDOX_PAIR, TRIAL_COEFS)
        if added not in comps and trial is not None:
            return reason
    return NO_REAL_BYPRODUCT
