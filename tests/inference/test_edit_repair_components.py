"""The product-component split of the edit beam in linear time on long chains (its groups against a plain
search: ``test_edit_beam.py``)."""

from __future__ import annotations

import time

import pytest

from gnn_chemalgebra.inference.edit_repair import _components

pytestmark = pytest.mark.unit


def test_a_long_chain_in_either_direction_is_one_group_quickly() -> None:
    """Union without ranks makes a chain of parents; the final pass must walk it once, not once per atom
    (20,000 atoms: about 2e8 steps the quadratic way)."""
    n = 20_000
    for edges in ([(k, k + 1) for k in range(n - 1)], [(k + 1, k) for k in reversed(range(n - 1))]):
        start = time.process_time()
        assert _components(n, edges) == [list(range(n))]
        assert time.process_time() - start < 1.0


def test_two_chains_and_a_lone_atom_keep_the_order_of_their_smallest_atoms() -> None:
    edges = [(k, k + 2) for k in range(0, 996, 2)] + [(k, k + 2) for k in range(1, 997, 2)]
    groups = _components(1000, edges)
    assert groups == [list(range(0, 998, 2)), list(range(1, 999, 2)), [998], [999]]
