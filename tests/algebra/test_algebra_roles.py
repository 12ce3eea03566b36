"""The role values are defined once (algebra.roles) and every floor reads the same ones."""

from __future__ import annotations

import pytest

from gnn_chemalgebra.algebra import decompose, extent
from gnn_chemalgebra.algebra.roles import PRODUCT, REACTANT, REAGENT, ROLE_NU, ROLES, role_class, role_name

pytestmark = pytest.mark.unit


def test_role_names_follow_the_sign_of_nu() -> None:
    assert [role_name(n) for n in ROLE_NU] == [REACTANT, REACTANT, REAGENT, PRODUCT, PRODUCT]
    assert role_name(-7) == REACTANT and role_name(9) == PRODUCT
    assert set(ROLES) == {"reactant", "reagent", "product"}  # the strings the builder's meta files hold


def test_role_class_is_the_head_label_clipped_to_its_range() -> None:
    assert [role_class(n) for n in ROLE_NU] == list(range(len(ROLE_NU)))
    assert role_class(-5) == 0 and role_class(4) == len(ROLE_NU) - 1
    assert ROLE_NU[role_class(0)] == 0


def test_the_algebra_uses_the_same_constants() -> None:
    assert decompose.REACTANT is REACTANT and decompose.REAGENT is REAGENT and decompose.PRODUCT is PRODUCT
    assert extent.REACTANT is REACTANT
