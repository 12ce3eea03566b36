"""The other extents of a Type-2 line's written roles, as alternatives: the same reaction, another number of times.

A Type-2 line written with the benchmark's rule takes the most probable extent of its posterior; the right line
is often the same roles at another extent (most misses on Type-2 lines are the extent, which the input does not
determine). :func:`extent_alternatives` writes each other extent of the posterior as a line, ``source + x * nu``
with ``nu`` read back from the written line itself, and gives it the probability that the roles are right times
the posterior's share of ``x``: ``min(1, confidence / p_written) * p_x`` (so none is above the written line, and
together with the written line they never exceed 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..chem.bag import bag_from_counts, format_bag, parse_bag
from ..errors import ChemAlgebraError


def _terms(text: str) -> list[tuple[str, int]] | None:
    try:
        return [(t.mol, t.coef) for t in parse_bag(text)]
    except ChemAlgebraError:
        return None


def _change(rec: Mapping[str, Any]) -> tuple[list[tuple[str, int]], dict[str, int]] | None:
    """The source terms and the change per extent, ``nu``, that the written line applied at its extent (``None``
    when the line is not ``source + extent * nu`` of distinct source molecules)."""
    xi = rec.get("extent")
    src, line = _terms(str(rec.get("source") or "")), _terms(str(rec.get("prediction") or ""))
    if not isinstance(xi, int) or xi <= 0 or src is None or line is None:
        return None
    before = dict(src)
    after: dict[str, int] = {}
    for m, c in line:
        after[m] = after.get(m, 0) + c
    if len(before) != len(src):
        return None
    nu: dict[str, int] = {}
    for m in [*before, *[m for m in after if m not in before]]:
        d = after.get(m, 0) - before.get(m, 0)
        if d % xi:
            return None
        nu[m] = d // xi
    return src, nu


def line_at(src: list[tuple[str, int]], nu: Mapping[str, int], x: int) -> str | None:
    """``source + x * nu`` in the source's term order, new molecules after (``None``: a negative coefficient)."""
    have = {m for m, _ in src}
    terms = [(m, c + x * nu.get(m, 0)) for m, c in src] + [(m, x * v) for m, v in nu.items() if m not in have]
    if any(c < 0 for _, c in terms):
        return None
    return format_bag(bag_from_counts(terms))


def extent_alternatives(rec: Mapping[str, Any], confidence: float) -> list[tuple[str, float]]:
    """``(line, probability)`` of each other extent of the written roles, most probable first; none for a line
    that is not a Type-2 line written with the ``bayes`` rule, a fallback, or a posterior without the written
    extent."""
    if int(rec.get("line_type") or 1) != 2 or rec.get("extent_rule") != "bayes" or rec.get("fallback"):
        return []
    cands, post = rec.get("extent_candidates") or [], rec.get("extent_posterior") or []
    xi = rec.get("extent")
    if len(cands) < 2 or len(cands) != len(post) or xi not in cands:
        return []
    p_written = float(post[cands.index(xi)])
    got = _change(rec) if p_written > 0 else None
    if got is None:
        return []
    roles = min(1.0, float(confidence) / p_written)
    out = []
    for x, p in sorted(zip(cands, post, strict=True), key=lambda t: -float(t[1])):
        line = None if x == xi or float(p) <= 0 else line_at(*got, int(x))
        if line is not None:
            out.append((line, min(roles * float(p), float(confidence))))
    return out
