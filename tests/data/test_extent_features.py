"""The learned extent scorer's features: one row per candidate, N_EXTENT_FEATURES columns, ranks not magnitudes."""

from __future__ import annotations

import pytest

from gnn_chemalgebra.algebra.extent import extent_posterior, group_terms
from gnn_chemalgebra.chem.bag import Term
from gnn_chemalgebra.data.featurize import N_EXTENT_FEATURES, extent_features

pytestmark = pytest.mark.unit


def _features(terms: list[Term], nu: dict[str, int], cset: str) -> tuple[list[int], list[list[float]]]:
    cands, post = extent_posterior(terms, nu, cset)
    return cands, extent_features(cands, group_terms(terms), nu, post)


def test_one_row_per_candidate_with_ends_rank_and_mode() -> None:
    cands, rows = _features([Term(5, "A"), Term(3, "B")], {"A": -1, "B": -1, "P": 1}, "in")
    assert cands == [1, 2, 3] and len(rows) == 3 and all(len(r) == N_EXTENT_FEATURES for r in rows)
    assert [r[0] for r in rows] == [1.0, 0.0, 0.0] and [r[1] for r in rows] == [0.0, 0.0, 1.0]
    assert [r[2] for r in rows] == [0.0, 0.5, 1.0]
    assert sum(r[3] for r in rows) == pytest.approx(1.0)
    assert rows[-1][5] == 0.5  # k = 3 exhausts B, one of the two reactants
    assert max(r[6] for r in rows) == 0.0 and all(-1.0 <= r[6] <= 0.0 for r in rows)
    assert extent_features([], {}, {}, []) == []
