"""Exact integer nullspace: properties that must hold for any integer matrix."""

from __future__ import annotations

from functools import reduce
from math import gcd

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gnn_chemalgebra.algebra.matrix import element_matrix, integer_nullspace, mat_vec, primitive, rank

matrices = st.integers(1, 4).flatmap(
    lambda rows: st.integers(1, 6).flatmap(
        lambda cols: st.lists(st.lists(st.integers(-6, 6), min_size=cols, max_size=cols), min_size=rows, max_size=rows)
    )
)


@pytest.mark.unit
@settings(max_examples=60, deadline=None)
@given(matrices)
def test_nullspace_exact_and_primitive(a: list[list[int]]) -> None:
    basis = integer_nullspace(a)
    ncols = len(a[0])
    assert len(basis) == ncols - rank(a)  # rank-nullity: a basis, not just some vectors
    for v in basis:
        assert len(v) == ncols
        assert mat_vec(a, v) == [0] * len(a)
        assert reduce(gcd, (abs(x) for x in v), 0) == 1
        assert next(x for x in v if x) > 0
    if basis:
        assert rank(basis) == len(basis)  # independent


@pytest.mark.unit
def test_empty_matrix_and_primitive() -> None:
    assert integer_nullspace([], 2) == [[1, 0], [0, 1]]
    assert primitive([0, -4, 6]) == [0, 2, -3]
    keys, rows = element_matrix([{"H": 2, "charge": 0}, {"O": 2}, {"H": 2, "O": 1}])
    assert keys == ["H", "O"] and rows == [[2, 0, 2], [0, 2, 1]]


@pytest.mark.unit
@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda rows: st.integers(1, 6).flatmap(
            lambda cols: st.lists(
                st.lists(st.integers(-4, 4), min_size=cols, max_size=cols), min_size=rows, max_size=rows
            )
        )
    )
)
def test_fraction_nullspace_is_sympys(rows: list[list[int]]) -> None:
    """The sympy-free RREF nullspace the completion uses gives sympy's pivots and basis exactly."""
    import sympy

    from gnn_chemalgebra.algebra.matrix import fraction_nullspace

    n = len(rows[0])
    pivots, basis = fraction_nullspace(rows, n)
    mat = sympy.Matrix(rows)
    assert pivots == list(mat.rref()[1])
    assert basis == [[sympy.Rational(x) for x in v] for v in mat.nullspace()]
