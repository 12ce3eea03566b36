"""The role values, defined once: the three role names and the role head's classes (a molecule's ``nu``).

A term of a line is a *reactant* (consumed), a *reagent* (unchanged) or a *product*; a distinct molecule's role
class is its coefficient ``nu`` in the base reaction, clipped to ``ROLE_NU`` (negative: consumed; zero: reagent;
positive: a product already written in the source). The builder's meta files, the algebra, the labels of the
role head and the predictor's JSON report all read these values from here.
"""

from __future__ import annotations

REACTANT, REAGENT, PRODUCT = "reactant", "reagent", "product"
ROLES: tuple[str, ...] = (REACTANT, REAGENT, PRODUCT)

# The role head's classes, in output order: nu in {-2, -1, 0, +1, +2}.
ROLE_NU: tuple[int, ...] = (-2, -1, 0, 1, 2)


def role_name(nu: int) -> str:
    """The role a molecule with base-reaction coefficient ``nu`` plays: reactant, reagent or product."""
    return REACTANT if nu < 0 else PRODUCT if nu > 0 else REAGENT


def role_class(nu: int) -> int:
    """Index of ``nu`` in :data:`ROLE_NU`, clipped to its range (the role head's label)."""
    return ROLE_NU.index(max(ROLE_NU[0], min(ROLE_NU[-1], nu)))


__all__ = ["PRODUCT", "REACTANT", "REAGENT", "ROLES", "ROLE_NU", "role_class", "role_name"]
