"""``target = source + xi * nu``: split a (source, target) pair into extent and reaction, and back.

Totals are per molecule string (duplicate terms summed): the benchmark keeps duplicates unmerged,
so only totals obey the identity exactly. ``nu`` is a primitive integer vector (gcd 1) over molecule
strings and ``xi`` a positive integer, so the split is unique.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import reduce
from math import gcd

from ..chem.bag import Term, bag_totals
from ..errors import BalanceError
from .roles import PRODUCT, REACTANT, REAGENT

Nu = dict[str, int]


@dataclass(frozen=True)
class Decomposition:
    """``nu`` (zeros omitted, first-seen order) and the extent ``xi`` (> 0)."""

    nu: Nu
    xi: int


def totals(terms: Sequence[Term]) -> dict[str, int]:
    """Total coefficient per molecule string."""
    return bag_totals(terms)


def difference(source: Sequence[Term], target: Sequence[Term]) -> dict[str, int]:
    """``totals(target) - totals(source)``, zeros omitted, source molecules first."""
    src, tgt = totals(source), totals(target)
    keys = list(src) + [m for m in tgt if m not in src]
    return {m: tgt.get(m, 0) - src.get(m, 0) for m in keys if tgt.get(m, 0) != src.get(m, 0)}


def nu_gcd(nu: Mapping[str, int]) -> int:
    return reduce(gcd, (abs(n) for n in nu.values()), 0)


def decompose(source: Sequence[Term], target: Sequence[Term]) -> Decomposition:
    """The unique ``(nu, xi)`` with ``nu`` primitive and ``xi > 0``; an error if target == source."""
    diff = difference(source, target)
    xi = nu_gcd(diff)
    if xi == 0:
        raise BalanceError("target totals equal source totals: no reaction to decompose")
    return Decomposition({m: d // xi for m, d in diff.items()}, xi)


def check_identity(source: Sequence[Term], target: Sequence[Term], nu: Mapping[str, int], xi: int) -> bool:
    """Does ``totals(target) == totals(source) + xi * nu`` hold exactly?"""
    return difference(source, target) == {m: xi * n for m, n in nu.items() if n}


def apply_extent(
    source: Sequence[Term],
    nu: Mapping[str, int],
    xi: int,
    roles: Sequence[str] | None = None,
) -> list[Term]:
    """The target bag ``source + xi * nu`` written the way the generator writes it.

    With ``roles`` (one per source term: reactant / reagent / product, as in meta ``src_roles``) this
    is the generator's rule exactly: reactant terms lose ``xi`` (dropped at 0), reagent terms stay,
    product terms gain ``xi``, and each product occurrence missing from the source is appended as a
    separate ``{xi}`` term (their number follows from ``nu`` and the reactant terms).

    Without roles it is a heuristic that works on totals: for ``n < 0`` the ``|n|`` largest terms of the
    molecule each lose ``xi`` (duplicates share k, so this subtracts evenly); for ``n > 0`` the ``n``
    smallest existing terms each gain ``xi`` and missing ones are appended as ``{xi}`` terms (the
    generator writes ``n`` separate terms, not one ``{xi*n}`` term). A molecule that is both reagent and
    product with ``k == xi`` is the one case it gets wrong.
    """
    if xi <= 0:
        raise BalanceError(f"extent must be positive, got {xi}")
    if roles is not None:
        out = _apply_with_roles(source, nu, xi, roles)
    else:
        out = _apply_heuristic(source, nu, xi)
    if not check_identity(source, out, nu, xi):
        raise BalanceError("extent cannot be applied: a coefficient would become negative")
    return out


def _apply_with_roles(source: Sequence[Term], nu: Mapping[str, int], xi: int, roles: Sequence[str]) -> list[Term]:
    if len(roles) != len(source):
        raise BalanceError(f"{len(roles)} roles for {len(source)} source terms")
    out: list[Term] = []
    n_react: dict[str, int] = {}
    n_prod: dict[str, int] = {}
    for term, role in zip(source, roles, strict=True):
        if role == REAGENT:
            out.append(term)
        elif role == REACTANT:
            n_react[term.mol] = n_react.get(term.mol, 0) + 1
            if term.coef - xi < 0:
                raise BalanceError(f"reactant {term.mol} has {term.coef} < extent {xi}")
            if term.coef > xi:
                out.append(Term(term.coef - xi, term.mol))
        elif role == PRODUCT:
            n_prod[term.mol] = n_prod.get(term.mol, 0) + 1
            out.append(Term(term.coef + xi, term.mol))
        else:
            raise BalanceError(f"unknown role {role!r}")
    for mol in list(nu) + [m for m in n_react if m not in nu]:
        missing = nu.get(mol, 0) + n_react.get(mol, 0) - n_prod.get(mol, 0)
        if missing < 0:
            raise BalanceError(f"nu and roles disagree on {mol}")
        out.extend(Term(xi, mol) for _ in range(missing))
    return out


def _apply_heuristic(source: Sequence[Term], nu: Mapping[str, int], xi: int) -> list[Term]:
    coefs = [t.coef for t in source]
    by_mol: dict[str, list[int]] = {}
    for i, t in enumerate(source):
        by_mol.setdefault(t.mol, []).append(i)
    extra: list[Term] = []
    for mol, n in nu.items():
        idx = by_mol.get(mol, [])
        if n < 0:
            order = sorted(idx, key=lambda i: -coefs[i])
            need = -n
            if not order:
                raise BalanceError(f"{mol} is consumed but absent from the source")
            # One xi from each of the |n| largest terms; beyond that, spread the rest evenly.
            for j in range(need):
                coefs[order[j % len(order)]] -= xi
        elif n > 0:
            order = sorted(idx, key=lambda i: coefs[i])
            for j in range(n):
                if j < len(order):
                    coefs[order[j]] += xi
                else:
                    extra.append(Term(xi, mol))
    if any(c < 0 for c in coefs):
        raise BalanceError("extent cannot be applied: a coefficient would become negative")
    return [Term(c, t.mol) for c, t in zip(coefs, source, strict=True) if c > 0] + extra


def bag_multiset(terms: Sequence[Term]) -> Counter:
    """Terms as a multiset of ``(coef, mol)``: the exact-match view of a bag."""
    return Counter((t.coef, t.mol) for t in terms)
