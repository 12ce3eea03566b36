"""One separated reaction closed with real by-products, as the chemist's-convention sets write it.

``reactants`` (the molecules that map into the product), ``reagents`` (as written, never consumed) and
``products`` go in; out comes the balanced reaction with its by-products and stoichiometric coefficients
(:func:`chemist_closure.close_plausibly`: each product once, reactants and by-products once or twice), or the
reason there is none (:func:`chemist_closure.why_not_closed`). Shared by every builder that closes reactions the
benchmark's leftover rule drops (the extra sources' rows for ``gnnca data dropped``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from .chemist_closure import close_plausibly, why_not_closed
from .chemist_lines import type1_readable
from .uspto import canonical_fragment

MAX_ADDED = 2  # by-products one closure may add
NOT_TYPE1 = "extent_not_readable"  # balanced, but the coefficients share a factor (no Type-1 line reads it back)
PRODUCT_AMONG_REACTANTS = "product_among_reactants"  # a product also written as a reactant


def close_sides(
    reactants: Sequence[str], reagents: Sequence[str], products: Sequence[str], max_added: int = MAX_ADDED
) -> dict[str, Any]:
    """``{"ok": True, reactants, reagents, products, byproducts, coefficients}`` (coefficients: SMILES ->
    stoichiometric coefficient, positive on both sides) or ``{"ok": False, "reason": ...}``.

    Repeated reactant or product molecules are one species (the closure sets their coefficients); reagents stay
    as written (a salt's repeated ions keep the line's charge balance). Never raises for odd chemistry: an
    exception is a reason ``error_<type>`` (counted by the caller)."""
    reactants, products = list(dict.fromkeys(reactants)), list(dict.fromkeys(products))
    if set(reactants) & set(products):
        return {"ok": False, "reason": PRODUCT_AMONG_REACTANTS}
    try:
        closure = close_plausibly(reactants, products, max_added)
        if closure is None:
            return {"ok": False, "reason": why_not_closed(reactants, products)}
    except Exception as exc:  # noqa: BLE001 - one odd reaction must not stop a build; counted by its type
        return {"ok": False, "reason": f"error_{type(exc).__name__}", "detail": str(exc)[:200]}
    names, values = closure
    byproducts = [canonical_fragment(b) or b for b in names]
    coefs = dict(zip([*reactants, *products, *byproducts], values, strict=True))
    if not type1_readable([coefs[m] for m in reactants], list(Counter(reagents).values())):
        return {"ok": False, "reason": NOT_TYPE1}
    return {
        "ok": True,
        "reactants": reactants,
        "reagents": list(reagents),
        "products": products,
        "byproducts": byproducts,
        "coefficients": coefs,
    }
