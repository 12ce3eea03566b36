"""The distinct balanced lines of a record's beam, and their share of the probability the written line leaves."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..chem.bag import parse_bag
from ..chem.molecule import composition
from ..chem.smiles import tautomer_key
from ..errors import ChemAlgebraError
from .features import NO_SCORE, entry_score

Candidate = tuple[int | None, str, float]  # (beam index or None, line, score)


def _line_key(text: str) -> frozenset[tuple[str, int]] | None:
    """A line as a multiset of molecules (duplicates merged), or ``None`` when it does not parse."""
    try:
        terms = parse_bag(text)
    except ChemAlgebraError:
        return None
    merged: Counter = Counter()
    for t in terms:
        merged[t.mol] += t.coef
    return frozenset(merged.items())


def _line_composition(key: frozenset[tuple[str, int]], repr: str) -> Counter | None:
    total: Counter = Counter()
    try:
        for mol, k in key:
            for el, n in composition(mol, repr).items():  # type: ignore[arg-type]
                total[el] += k * n
    except ChemAlgebraError:
        return None
    return Counter({el: n for el, n in total.items() if n})


def same_products_key(text: str, repr: str) -> frozenset[tuple[str, int]] | None:
    """:func:`_line_key` with each SMILES replaced by its tautomer key: tautomers and resonance forms of one
    product are one line (formulas are the same for them already)."""
    key = _line_key(text)
    if key is None or repr != "smiles":
        return key
    merged: Counter = Counter()
    for mol, k in key:
        merged[tautomer_key(mol)] += k
    return frozenset(merged.items())


def candidate_lines(rec: Mapping[str, Any], repr: str) -> list[Candidate]:
    """The distinct balanced lines of a record, in beam order: ``(beam index or None, line, score)``; the written
    line first (``None`` when it is not a beam entry: a fallback's copied source). Entries without a score
    (the no-reaction entry), unbalanced ones and repeats of an earlier line (tautomers and resonance forms of its
    products included) are left out."""
    written = str(rec.get("prediction", ""))
    beam = rec.get("beam") or []
    first = None if rec.get("fallback") or not beam or beam[0].get("prediction") != written else 0
    out: list[Candidate] = [(first, written, NO_SCORE if first is None else entry_score(beam[0]))]
    rest = [(i, e) for i, e in enumerate(beam) if i != first and e.get("logp") is not None]
    if not rest:
        return out
    src = _line_key(str(rec.get("source", "")))
    src_comp = _line_composition(src, repr) if src is not None else None
    seen = {k for k in [same_products_key(written, repr)] if k is not None}
    for i, entry in rest:
        key = _line_key(str(entry.get("prediction", "")))
        if key is None:
            continue
        same = same_products_key(str(entry.get("prediction", "")), repr)
        if same in seen:
            continue
        if src_comp is not None and _line_composition(key, repr) != src_comp:
            continue
        seen.add(same)
        out.append((i, str(entry["prediction"]), entry_score(entry)))
    return out


def beam_share(cands: Sequence[Candidate], conf: float) -> list[float]:
    """Without an alternatives model: each alternative in beam order takes the share ``w / (1 + w)`` of the mass
    still left, ``w = exp(score - top score)`` (so a lone alternative never takes all of ``1 - conf``)."""
    if len(cands) < 2:
        return []
    w = np.exp(np.array([s for _, _, s in cands[1:]]) - cands[0][2])
    left, out = max(1.0 - conf, 0.0), []
    for share in (w / (1.0 + w)).tolist():
        out.append(left * share)
        left -= out[-1]
    return in_rank_order(out, conf)


def in_rank_order(p: Sequence[float], top_conf: float) -> list[float]:
    """Alternatives' probabilities (in beam order) made consistent: each at most the written line's (the written
    line stays ``top_k[0]``) and at most the mass the ones before it left of ``1 - top_conf``. Each depends only on
    the alternatives ranked before it, so a wider ``--top-k`` adds lines without changing the ones shown."""
    left, out = max(1.0 - top_conf, 0.0), []
    for q in p:
        out.append(max(min(float(q), top_conf, left), 0.0))
        left -= out[-1]
    return out


def cap_to_mass(p: Sequence[float], mass: float) -> list[float]:
    """Probabilities in order, each cut to the mass the ones before it left of ``mass``."""
    left, out = max(mass, 0.0), []
    for q in p:
        out.append(max(min(float(q), left), 0.0))
        left -= out[-1]
    return out
