"""The decoder's values: the extent rule of a line, the k-best joint role assignments, one example's network
outputs as numbers (:class:`LineOutputs`), a decoded hypothesis and a decoding's result (:class:`DecodeResult`).
The search over them is :mod:`.decoder`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, NamedTuple, TypedDict

import torch

from ..algebra.extent import S_IN, S_OUT
from ..chem.bag import Term
from ..errors import InputError
from .byproduct_convention import BENCHMARK
from .decode import Decoded

EXTENT_RULES: tuple[str, ...] = ("auto", "bayes", "limiting")
_NEG_INF = float("-inf")
BENCHMARK_COEFS = frozenset(S_IN) | frozenset(S_OUT)


def extent_rule_for(terms: Sequence[Term], extent: str) -> str:
    """The extent rule of one line: ``bayes`` / ``limiting`` as asked; ``auto`` reads a line whose coefficients
    all lie in the benchmark's sets (1..10) as a benchmark line (``bayes``, the rule its targets follow) and any
    other line, e.g. amounts like ``{20}A.{35}B``, as a chemist's amounts (``limiting``)."""
    if extent not in EXTENT_RULES:
        raise InputError(f"--extent must be one of {', '.join(EXTENT_RULES)}, got {extent!r}")
    if extent != "auto":
        return extent
    return "bayes" if all(t.coef in BENCHMARK_COEFS for t in terms) else "limiting"


def kbest_assignments(logp: torch.Tensor, k: int) -> list[tuple[float, tuple[int, ...]]]:
    """The k most likely joint assignments of independent per-row categorical choices (beam over rows)."""
    return kbest_rows(logp.tolist(), k)


def kbest_rows(rows: Sequence[Sequence[float]], k: int) -> list[tuple[float, tuple[int, ...]]]:
    """:func:`kbest_assignments` of log-probabilities given as lists (rows of per-class values)."""
    beams: list[tuple[float, tuple[int, ...]]] = [(0.0, ())]
    first = itemgetter(0)
    for row in rows:
        # heapq.nlargest(k, candidates, key) is sorted(..., reverse=True)[:k], stable: ties keep candidate order
        # (beam entry, then class); the assignment tuples are built for the k survivors only
        cand = [(s + lp, i, j) for i, (s, _) in enumerate(beams) for j, lp in enumerate(row)]
        cand.sort(key=first, reverse=True)
        beams = [(sc, beams[i][1] + (j,)) for sc, i, j in cand[:k]]
    return beams


class ExampleOutputs(TypedDict, total=False):
    """One example's network outputs as tensors (:meth:`~.runner.BatchOutputs.example`): role probabilities
    [molecules, classes], by-product probabilities in vocabulary order, the bag embedding [1, dim]; the naive
    head's coefficient choices; the leftover head's log-probabilities [slots, count classes] and element column
    per slot."""

    role_p: torch.Tensor
    extra_p: torch.Tensor
    bag: torch.Tensor
    coef: list[int]
    newcoef: int
    left_lp: torch.Tensor
    left_elem: torch.Tensor


@dataclass(slots=True)
class LineOutputs:
    """One example's network outputs as plain numbers, what the search and the report read: role probabilities
    and their logs per molecule (``log(max(p, 1e-12))``, as torch computes them), by-product probabilities in
    vocabulary order, the leftover head's candidates (``has_left``: the head exists), the bag embedding (the
    learned extent scorer) and the naive head's choices. :meth:`Decoder.line_outputs` builds it from one
    example's tensors, :meth:`Decoder.batch_line_outputs` for a whole batch at once (same numbers)."""

    role_p: list[list[float]]
    logp: list[list[float]]
    extra_p: list[float]
    left: list[tuple[str | None, float]]
    has_left: bool
    bag: Any = None
    coef: list[int] | None = None
    newcoef: int | None = None
    vocab_extras: list[str] | None = None  # the by-products with p > 0.5, vocabulary order (None: read extra_p)
    left_lp: Any = None  # the leftover head's log-probabilities [slots, count classes] (scores any composition)
    left_elem: list[int] | None = None  # the element column of each slot


class Hypothesis(NamedTuple):
    """One decoded hypothesis: its score (network log-probabilities, plus the Type-2 evidence when weighed), the
    exact decoding, the role-head class per input molecule (``None``: the no-reaction fallback), and the
    by-products it wrote besides the main product (the leftover option, vocabulary by-products, or the edit
    model's other new products)."""

    score: float
    decoded: Decoded
    roles: tuple[int, ...] | None = None
    extras: tuple[str, ...] = ()


@dataclass
class DecodeResult:
    """The beam (best first), the hypothesis written (``chosen``; the source copied when ``fallback``), the extent
    rule used, how by-products were proposed (``mode``: ``leftover`` head, ``vocab`` head or ``edit`` model), and
    what the heads proposed on their own (confident vocabulary by-products, the top leftover)."""

    beam: list[Hypothesis]
    chosen: Hypothesis
    fallback: bool
    extent_rule: str
    mode: str = "vocab"
    vocab_extras: list[str] = field(default_factory=list)
    leftover: str | None = None
    equation: str | None = None  # a line with given products: the balanced reaction written
    convention: str = BENCHMARK  # the by-product convention that wrote the line (benchmark / chemist)
    convention_note: str | None = None  # a chemist's line was asked and could not be written: why
