"""Type-2 lines of a reaction balanced with real by-products: independent amounts, products possibly present.

The benchmark's Type-2 draw (:func:`augment.draw_type2`) gives every distinct molecule its own ``k_m`` and
reacts ``k_hat`` times a base reaction whose coefficients are all 1. A reaction closed with real by-products has
its own coefficients ``c_m`` (``2 HCl``), so here every reactant, product and by-product draws ``k_m >= c_m``
(from the coefficient set where it allows, else ``c_m`` times a draw), the extent ``xi`` is uniform in
``1..min(k_m // c_m)``, the source holds the reactants (``k_m``), the reagents and the products already present
(``k_m - xi * c_m`` when positive), the target the products (``k_m``), the reagents and the reactants left over
(``k_m - xi * c_m`` when positive). ``target = source + xi * nu`` is checked for every line.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ..algebra.roles import PRODUCT, REACTANT, REAGENT
from ..chem.bag import format_bag
from .chemist_lines import shuffled_checked


def written_names_distinct(reaction: Mapping[str, Any], name: Mapping[str, str] | None) -> bool:
    """Whether the reactants, products and by-products keep distinct strings when written (two isomers share
    one formula: their amounts would merge, which a Type-2 line cannot say). A reagent may share a string with a
    by-product (water as solvent and as by-product): its terms are not consumed and the identity still holds."""
    species = [*reaction["reactants"], *reaction["products"], *reaction["byproducts"]]
    written = {(name or {}).get(m, m) for m in species}
    return len(written) == len(species)


def type2_line(
    reaction: Mapping[str, Any], coef_set: Sequence[int], rng: random.Random, name: Mapping[str, str] | None = None
) -> tuple[str, str, dict[str, Any]]:
    """``(source, target, meta)`` of one Type-2 draw of a balanced reaction (see the module docstring).

    ``reaction`` as for :func:`chemist_lines.chemist_line`; ``name`` maps SMILES to the written string (formulas).
    The caller checks :func:`written_names_distinct` first."""
    name = name or {}
    coefs = reaction["coefficients"]
    made = [*reaction["products"], *reaction["byproducts"]]
    choices = list(coef_set)

    def w(mol: str) -> str:
        return name.get(mol, mol)

    k: dict[str, int] = {}
    for m in (*reaction["reactants"], *made):
        c = coefs[m]
        k[m] = rng.choice([v for v in choices if v >= c] or [c * v for v in choices])
    reagents = Counter(reaction["reagents"])  # a reagent may also be a by-product (water): amounts of its own
    k_reagent = {m: rng.choice(choices) * n for m, n in reagents.items()}  # a salt's repeated ion keeps its count
    xi = rng.randint(1, min(k[m] // coefs[m] for m in (*reaction["reactants"], *made)))
    src = [(w(m), k[m], REACTANT) for m in reaction["reactants"]] + [(w(m), n, REAGENT) for m, n in k_reagent.items()]
    src += [(w(m), k[m] - xi * coefs[m], PRODUCT) for m in made if k[m] > xi * coefs[m]]
    tgt = [(w(m), k[m], PRODUCT) for m in made] + [(w(m), n, REAGENT) for m, n in k_reagent.items()]
    tgt += [(w(m), k[m] - xi * coefs[m], REACTANT) for m in reaction["reactants"] if k[m] > xi * coefs[m]]
    nu = {w(m): -coefs[m] for m in reaction["reactants"]} | {w(m): coefs[m] for m in made}
    src_terms, tgt_terms = shuffled_checked(src, tgt, xi, nu, rng, lambda: f"reaction {reaction['id']}")
    meta = {
        "rxn": reaction["id"],
        "set": "in",
        "xi": xi,
        "k": {w(m): v for m, v in k.items()},
        "k_reagents": {w(m): v for m, v in k_reagent.items()},
        "src_roles": [r for _, _, r in src],
        "tgt_roles": [r for _, _, r in tgt],
        "nu": [[m, n] for m, n in nu.items()],
        "main_products": [[w(m), coefs[m]] for m in reaction["products"]],
        "byproducts": [[w(m), coefs[m]] for m in reaction["byproducts"]],
    }
    return format_bag(src_terms), format_bag(tgt_terms), meta
