"""Type-1 lines of the chemist's-convention sets: a balanced reaction with its own stoichiometry, in SMILES or formulas.

A benchmark Type-1 line writes one ``k`` on every term because every USPTO-BAL base reaction has unit coefficients.
A reaction closed with real by-products has its own (``2 HCl``, ``3 H2O``), so each term carries ``k`` times its
stoichiometric coefficient: reagents ``{k}``, reactants ``{k*c}``, products and by-products ``{k*c}``. The extent
is ``k`` and the target is ``source + k * nu``, checked for every line. The Type-1 reading of a source (the gcd of
its coefficients) gives ``k`` only when the source's own coefficients have no common factor; reactions where they do
cannot be written as a Type-1 line (:func:`type1_readable`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from functools import reduce
from math import gcd
from typing import Any

from ..algebra.roles import PRODUCT, REACTANT, REAGENT
from ..chem.bag import Term, format_bag
from .augment import Draw, check_identity


def type1_readable(reactant_coefs: Sequence[int], reagent_counts: Sequence[int]) -> bool:
    """Whether the Type-1 rule (gcd of the source's coefficients) reads the extent back as ``k``: the reactants'
    stoichiometric coefficients and the reagents' multiplicities (a salt's repeated ion) have no common factor."""
    return reduce(gcd, [*reactant_coefs, *reagent_counts], 0) == 1


def _merged(terms: list[tuple[str, int, str]]) -> list[tuple[str, int, str]]:
    """One term per (molecule string, role): formulas of two isomers, or a repeated molecule, add up."""
    out: dict[tuple[str, str], int] = {}
    for mol, coef, role in terms:
        out[(mol, role)] = out.get((mol, role), 0) + coef
    return [(mol, coef, role) for (mol, role), coef in out.items()]


def shuffled_checked(
    src: list[tuple[str, int, str]],
    tgt: list[tuple[str, int, str]],
    xi: int,
    nu: Mapping[str, int],
    rng: random.Random,
    where: Callable[[], str],
) -> tuple[list[Term], list[Term]]:
    """Both sides' terms shuffled in place by ``rng`` (as the benchmark's generator does), checked against
    ``target == source + xi * nu`` (:func:`~.augment.check_identity`); a line that breaks it is a builder bug,
    named by ``where()``."""
    rng.shuffle(src)
    rng.shuffle(tgt)
    draw = Draw([Term(c, m) for m, c, _ in src], [Term(c, m) for m, c, _ in tgt], [], [], xi, {})
    if not check_identity(draw, dict(nu)):
        raise ValueError(f"target != source + xi*nu for {where()}")
    return draw.src, draw.tgt


def chemist_line(
    reaction: Mapping[str, Any], k: int, rng: random.Random, name: Mapping[str, str] | None = None
) -> tuple[str, str, dict[str, Any]]:
    """``(source, target, meta)`` of one balanced reaction drawn with extent ``k``.

    ``reaction``: ``reactants``, ``reagents``, ``products``, ``byproducts`` (SMILES) and ``coefficients`` (SMILES ->
    stoichiometric coefficient, positive on both sides). ``name`` maps each SMILES to the string written (formulas
    for the formula lines; default: the SMILES). Terms are shuffled by ``rng`` as the benchmark's generator does.
    """
    name = name or {}
    coefs = reaction["coefficients"]

    def w(mol: str) -> str:
        return name.get(mol, mol)

    src = _merged(
        [(w(m), k * coefs[m], REACTANT) for m in reaction["reactants"]]
        + [(w(m), k, REAGENT) for m in reaction["reagents"]]
    )
    made = [*reaction["products"], *reaction["byproducts"]]
    tgt = _merged([(w(m), k * coefs[m], PRODUCT) for m in made] + [(w(m), k, REAGENT) for m in reaction["reagents"]])
    nu: dict[str, int] = {}
    for m in reaction["reactants"]:
        nu[w(m)] = nu.get(w(m), 0) - coefs[m]
    for m in made:
        nu[w(m)] = nu.get(w(m), 0) + coefs[m]
    nu = {m: n for m, n in nu.items() if n}
    src_terms, tgt_terms = shuffled_checked(
        src, tgt, k, nu, rng, lambda: f"MIT {reaction['mit_split']} line {reaction['mit_index'] + 1}"
    )
    meta = {
        "rxn": reaction["id"],
        "mit_split": reaction["mit_split"],
        "mit_index": reaction["mit_index"],
        "set": "in",
        "xi": k,
        "src_roles": [r for _, _, r in src],
        "tgt_roles": [r for _, _, r in tgt],
        "nu": [[m, n] for m, n in nu.items()],
        "main_products": [[w(m), k * coefs[m]] for m in reaction["products"]],
        "byproducts": [[w(m), k * coefs[m]] for m in reaction["byproducts"]],
    }
    return format_bag(src_terms), format_bag(tgt_terms), meta
