"""``_kbest`` (scores first, choice tuples only for the kept states) and ``_components`` equal the code they replaced,
ties included (earlier state/option first)."""

from __future__ import annotations

import heapq
import random

import pytest
import torch

import gnn_chemalgebra.inference.edit_beam as eb
import gnn_chemalgebra.inference.edit_repair as er

pytestmark = pytest.mark.unit


def _reference_kbest(factors, n_uncertain, width):
    gaps = [(f.options[1][1] - f.options[0][1], k) for k, f in enumerate(factors) if len(f.options) > 1]
    chosen = [k for _, k in heapq.nlargest(n_uncertain, gaps)]
    states = [(0.0, ())]
    for k in chosen:
        opts = factors[k].options
        best = opts[0][1]
        nxt = [
            (delta + lp - best, (*ch, (k, o)) if o else ch) for delta, ch in states for o, (_, lp) in enumerate(opts)
        ]
        nxt.sort(key=lambda t: t[0], reverse=True)
        states = nxt[:width]
    return [(delta, dict(ch)) for delta, ch in states]


@pytest.mark.parametrize("seed", range(40))
def test_kbest_equals_reference(seed: int) -> None:
    rng = random.Random(seed)
    factors = []
    for k in range(rng.randint(0, 30)):
        n_opt = rng.choice([1, 2, 2, 3, 5])
        # coarse values so that equal scores (ties) are common
        lps = sorted((-rng.randint(0, 8) / 4.0 for _ in range(n_opt)), reverse=True)
        factors.append(er._Factor("pair", (k, k + 1), [(c, lp) for c, lp in enumerate(lps)]))
    n_uncertain, width = rng.randint(0, 12), rng.randint(1, 40)
    got = eb._kbest(factors, n_uncertain, width)
    assert got == _reference_kbest(factors, n_uncertain, width)
    assert all(type(d) is float for d, _ in got)


def _reference_components(n, edges):
    """Connected components by breadth-first search, ordered by smallest member, members ascending."""
    adj = {x: set() for x in range(n)}
    for i, j in edges:
        adj[i].add(j)
        adj[j].add(i)
    seen, out = set(), []
    for x in range(n):
        if x in seen:
            continue
        comp, todo = {x}, [x]
        while todo:
            for y in adj[todo.pop()] - comp:
                comp.add(y)
                todo.append(y)
        seen |= comp
        out.append(sorted(comp))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_components_equal_reference(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(0, 60)
    edges = [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(0, 2 * n))] if n else []
    assert er._components(n, edges) == _reference_components(n, edges)


@pytest.mark.parametrize("width", [1, 2, 3, 5, 13])
def test_options_equal_the_generic_rows(width: int) -> None:
    gen = torch.Generator().manual_seed(width)
    lp = torch.log_softmax(torch.randn(40, width, generator=gen), -1)
    lp[3] = lp[4]  # a repeated row
    for k in (1, 2, 3, 4):
        v, idx = lp.topk(min(k, width), dim=-1)
        want = [list(zip(i, x, strict=True)) for i, x in zip(idx.tolist(), v.tolist(), strict=True)]
        got = eb._options(lp, k)
        assert got == want
        assert all(type(c) is int and type(x) is float for row in got for c, x in row)
    assert eb._options(lp[:0], 2) == []
