"""Element matrices and exact integer nullspaces.

Balancing is linear algebra over the integers; floating point would turn "balanced" into
"balanced up to 1e-12", so everything here is sympy ``Rational`` and Python ``int``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from functools import reduce
from math import gcd, lcm
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sympy

IntMatrix = list[list[int]]


def element_matrix(compositions: Sequence[Mapping[str, int]]) -> tuple[list[str], IntMatrix]:
    """Rows = element/charge keys (first-seen order), columns = the given molecules.

    Keys whose row is all zero (e.g. a ``"charge"`` of 0) are left out: they constrain nothing.
    """
    keys: list[str] = []
    for comp in compositions:
        for key, n in comp.items():
            if n and key not in keys:
                keys.append(key)
    rows = [[int(comp.get(key, 0)) for comp in compositions] for key in keys]
    return keys, rows


def primitive(vec: Sequence[int | sympy.Rational]) -> list[int]:
    """Scale a rational vector to integers with gcd 1 and first non-zero entry positive."""
    import sympy  # imported on use: the predict path reaches this module but a formula line never needs sympy

    rats = [sympy.Rational(v) for v in vec]
    den = reduce(lcm, (int(r.q) for r in rats), 1)
    ints = [int(r * den) for r in rats]
    g = reduce(gcd, (abs(v) for v in ints), 0)
    if g == 0:
        return ints
    ints = [v // g for v in ints]
    first = next(v for v in ints if v != 0)
    return [-v for v in ints] if first < 0 else ints


def integer_nullspace(matrix: IntMatrix, ncols: int | None = None) -> IntMatrix:
    """Basis of ``{v : A v = 0}`` as primitive integer vectors (exact, via sympy's RREF).

    ``ncols`` is needed when ``matrix`` has no rows. The basis is the RREF one (each vector has a
    1-pattern on its own free column), scaled by :func:`primitive`.
    """
    if ncols is None:
        if not matrix:
            raise ValueError("ncols is required for a matrix without rows")
        ncols = len(matrix[0])
    if not matrix:
        return [[int(i == j) for j in range(ncols)] for i in range(ncols)]
    import sympy

    mat = sympy.Matrix([[sympy.Integer(v) for v in row] for row in matrix])
    if mat.shape[1] != ncols:
        raise ValueError(f"matrix has {mat.shape[1]} columns, expected {ncols}")
    return [primitive(list(v)) for v in mat.nullspace()]


def mat_vec(matrix: IntMatrix, vec: Sequence[int]) -> list[int]:
    """Exact integer product ``A v`` (used by checks and tests)."""
    return [sum(a * b for a, b in zip(row, vec, strict=True)) for row in matrix]


def rank(matrix: IntMatrix) -> int:
    """Exact rank."""
    if not matrix:
        return 0
    import sympy

    return int(sympy.Matrix(matrix).rank())


def fraction_nullspace(matrix: IntMatrix, ncols: int) -> tuple[list[int], list[list[Fraction]]]:
    """The pivot columns of the reduced row echelon form of ``matrix`` and the RREF basis of its nullspace (one
    vector per free column, 1 there), exact in :class:`~fractions.Fraction`: the same pivots and basis as sympy's
    ``rref()`` / ``nullspace()``, without importing sympy (a second on the start of a one-line ``gnnca predict``)."""
    rows = [[Fraction(v) for v in row] for row in matrix]
    pivots: list[int] = []
    r = 0
    for c in range(ncols):
        pick = next((i for i in range(r, len(rows)) if rows[i][c] != 0), None)
        if pick is None:
            continue
        rows[r], rows[pick] = rows[pick], rows[r]
        lead = rows[r][c]
        rows[r] = [x / lead for x in rows[r]]
        for i in range(len(rows)):
            if i != r and rows[i][c] != 0:
                f = rows[i][c]
                rows[i] = [a - f * b for a, b in zip(rows[i], rows[r], strict=True)]
        pivots.append(c)
        r += 1
        if r == len(rows):
            break
    basis = []
    for free in (j for j in range(ncols) if j not in pivots):
        vec = [Fraction(0)] * ncols
        vec[free] = Fraction(1)
        for i, pc in enumerate(pivots):
            vec[pc] = -rows[i][free]
        basis.append(vec)
    return pivots, basis
