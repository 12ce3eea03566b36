"""Edit beam (:mod:`.edit_decode` loads the model and batches reactions; :mod:`.edit_repair` repairs a
candidate): from the edit model's pair/atom probabilities to ranked, RDKit-valid main-product sets.

For one reaction the decoder

1. keeps as factors every existing reactant bond and the ``n_nonbond`` non-bonded pairs most likely to form a
   bond (every other pair stays unbonded), plus each reactant atom's valence residual and charge change;
2. starts from the argmax of every factor and enumerates the k best joint assignments over the
   ``n_uncertain`` factors whose runner-up is closest (exact k-best for independent factors: a beam of
   ``width`` over the factors, alternatives sorted by log-probability);
3. turns each assignment into :class:`~gnn_chemalgebra.chem.edits.EditLabels` (``dH = residual - dV``, so
   hydrogens follow the chosen bonds), keeps the edited connected components whose atoms vote "product"
   (mean probability > 0.5), applies them with :func:`~gnn_chemalgebra.chem.edits.apply_edits` (sanitised;
   a candidate RDKit refuses is dropped) and merges duplicates (the best score wins).

Score = sum of the chosen options' log-probabilities over all factors. The leftover chain is not predicted:
it follows from the composition difference (:func:`~gnn_chemalgebra.chem.leftover.leftover_from_composition`).
"""

from __future__ import annotations

import heapq
import itertools
import math
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import torch

from ..chem.edits import NONE, EditLabels, reactant_graph
from ..data.edit_dataset import (
    BOND_VALENCE,
    EditData,
)
from .edit_repair import (
    _KINDS,
    _Assigner,
    _composition,
    _Factor,
    _labels_key,
    _repair,
    _slack,
    _state_labels,
    _verdict,
)


@dataclass
class EditCandidate:
    """One decoded product set: main products (canonical SMILES, sorted), score, and the edits behind it."""

    products: list[str]
    score: float
    labels: EditLabels


def _options(lp: torch.Tensor, k: int) -> list[list[tuple[int, float]]]:
    """Per row, the ``k`` best classes with their log-probabilities, best first."""
    if lp.numel() == 0:
        return []
    v, idx = lp.topk(min(k, lp.size(-1)), dim=-1)
    classes, lps = idx.tolist(), v.tolist()
    # the same lists of (class, log-prob) tuples; rows of two or three options unpacked directly (most rows)
    if idx.size(-1) == 2:
        return [[(c0, x0), (c1, x1)] for (c0, c1), (x0, x1) in zip(classes, lps, strict=True)]
    if idx.size(-1) == 3:
        return [[(c0, x0), (c1, x1), (c2, x2)] for (c0, c1, c2), (x0, x1, x2) in zip(classes, lps, strict=True)]
    return [list(zip(i, x, strict=True)) for i, x in zip(classes, lps, strict=True)]


def _factors(
    out: dict[str, torch.Tensor], data: EditData, n_nonbond: int, n_alt: int
) -> tuple[list[_Factor], dict[tuple[int, int], int]]:
    n_react = int(data.n_react)
    lp_pair = torch.log_softmax(out["pair"].float(), -1)
    cur = data.pair_cur
    ii, jj = data.pair_index
    cur_of: dict[tuple[int, int], int] = {}
    factors: list[_Factor] = []

    bonded = (cur != NONE).nonzero().flatten()
    nonb = (cur == NONE).nonzero().flatten()
    if nonb.numel():
        form = 1.0 - lp_pair[nonb, NONE].exp()
        top = nonb[form.topk(min(n_nonbond, nonb.numel())).indices]
        keep = torch.cat([bonded, top])
    else:
        keep = bonded
    for key, c, opts in zip(
        zip(ii[keep].tolist(), jj[keep].tolist(), strict=True),
        cur[keep].tolist(),
        _options(lp_pair[keep], n_alt),
        strict=True,
    ):
        cur_of[key] = c
        factors.append(_Factor("pair", key, opts))
    h_opts = _options(torch.log_softmax(out["h"][:n_react].float(), -1), 2)
    q_opts = _options(torch.log_softmax(out["q"][:n_react].float(), -1), 2)
    for g in range(n_react):
        factors.append(_Factor("h", g, h_opts[g]))
        factors.append(_Factor("q", g, q_opts[g]))
    return factors, cur_of


def _kbest(factors: Sequence[_Factor], n_uncertain: int, width: int) -> list[tuple[float, dict[int, int]]]:
    """The ``width`` best joint choices over the most uncertain factors: (log-prob gain vs argmax, choices)."""
    gaps = [(f.options[1][1] - f.options[0][1], k) for k, f in enumerate(factors) if len(f.options) > 1]
    chosen = [k for _, k in heapq.nlargest(n_uncertain, gaps)]
    states: list[tuple[float, tuple[tuple[int, int], ...]]] = [(0.0, ())]
    for k in chosen:
        opts = factors[k].options
        best = opts[0][1]
        # scores of every (state, option) extension, state-major; only the kept ones build their choice tuple
        scores = [delta + lp - best for delta, _ in states for _, lp in opts]
        m = len(opts)
        # a stable sort by score, highest first: what heapq.nlargest(width, ...) returns (ties: earlier first)
        top = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)[:width]
        states = [(scores[t], (*states[t // m][1], (k, t % m)) if t % m else states[t // m][1]) for t in top]
    return [(delta, dict(ch)) for delta, ch in states]


def decode_reaction(
    reactants: Sequence[str],
    n_atoms: Sequence[int],
    out: dict[str, torch.Tensor],
    data: EditData,
    beam: int = 5,
    *,
    n_nonbond: int = 16,
    n_uncertain: int = 10,
    width: int = 0,
    max_tries: int = 0,
    flip_margin: float = 0.5,
    conserve: bool = True,
    repair: bool = True,
) -> list[EditCandidate]:
    """Top ``beam`` valid product sets of one reaction (``out``: the model's outputs for this reaction only).

    Besides the bond/H/charge assignments, the product-component vote is an alternative too: when the least
    certain component's vote is within ``flip_margin`` of 0.5, the selection with that component flipped
    joins the queue with its own score. At most ``max_tries`` (default ``4 * beam``) candidates go to RDKit,
    (three times as many while none is valid), which bounds the time per reaction. ``conserve`` drops
    candidates whose products hold an atom (charge-tagged label, explicit H) beyond the reactants, or leave a
    difference that no leftover chain can carry: no gold base reaction does either, so such a candidate can
    neither be right nor balanced. ``repair``: a choice that leaves an atom with negative hydrogens (a bond
    formed at an atom without H) also breaks or lowers that atom's most likely existing bond (its leaving
    group), paying that option's log-probability (see :func:`_repair`).
    """
    return list(
        EditBeam(
            reactants,
            n_atoms,
            out,
            data,
            beam,
            n_nonbond=n_nonbond,
            n_uncertain=n_uncertain,
            width=width,
            max_tries=max_tries,
            flip_margin=flip_margin,
            conserve=conserve,
            repair=repair,
        )
    )


class EditBeam:
    """:func:`decode_reaction` run lazily: iterating yields its candidates in the same order, each computed when
    asked for, and :meth:`bound` caps the score of every candidate not produced yet.

    A caller that only needs the best candidate of some kind can stop as soon as it holds one that scores at
    least :meth:`bound`: no later candidate can then score higher, and on a tie the earlier one ranks first.
    Most of the RDKit work (the candidates' verdicts) is then never done.
    """

    def __init__(
        self,
        reactants: Sequence[str],
        n_atoms: Sequence[int],
        out: dict[str, torch.Tensor],
        data: EditData,
        beam: int = 5,
        *,
        n_nonbond: int = 16,
        n_uncertain: int = 10,
        width: int = 0,
        max_tries: int = 0,
        flip_margin: float = 0.5,
        conserve: bool = True,
        repair: bool = True,
    ) -> None:
        factors, cur_of = _factors(out, data, n_nonbond, 3)
        self.factors, self.cur_of = factors, cur_of
        self.base = sum(f.options[0][1] for f in factors)
        self.n_react = int(data.n_react)
        self.p_prod = torch.sigmoid(out["prod"][: self.n_react].float()).tolist()
        self.reactants, self.n_atoms, self.beam = list(reactants), n_atoms, beam
        self.flip_margin, self.repair = flip_margin, repair
        self.results: list[EditCandidate] = []
        self.seen: set[tuple[str, ...]] = set()
        self.tries = max_tries or 4 * beam
        self.spare = 2 * self.tries  # extra tries while nothing valid has been found yet
        self.conserve = conserve
        self.r_comp = _composition(reactants) if conserve else None
        self.graph = reactant_graph(reactants)  # parsed once: every candidate copies it
        self.h_count = self.graph.h
        self.assign = _Assigner(factors, cur_of)
        self._packed: tuple | None = None  # the factors while parked (see park)
        self.verdicts: dict[tuple, list[str] | None] = {}  # labels -> valid balanced products (None: dropped)
        self.incident: dict[int, list[int]] = {}
        for k, f in enumerate(factors):
            if f.kind == "pair" and cur_of[f.key] != NONE:
                for g in f.key:
                    self.incident.setdefault(g, []).append(k)
        self._widths = (n_uncertain, width or max(8 * beam, 48))
        self.states = _kbest(factors, *self._widths)
        self.pos = 0  # index of the next stream state
        self.pending: list[tuple[float, int, EditLabels]] = []  # heap of (-score, tie-break, labels)
        self.tick = itertools.count()
        self.done = False
        self._caps: list[float] | None = None  # per state: base + delta + an upper bound of the repair gain
        self._by_cap: list[int] = []
        self._expanded: dict[int, tuple[float, EditLabels, float, tuple[float, EditLabels] | None] | None] = {}

    def __iter__(self) -> Iterator[EditCandidate]:
        k = 0
        while k < len(self.results) or self._step():
            yield self.results[k]
            k += 1

    def _running(self) -> bool:
        return (
            (self.tries > 0 or (not self.results and self.tries > -self.spare))
            and len(self.results) < self.beam
            and (self.pos < len(self.states) or bool(self.pending))
        )

    def _step(self) -> bool:
        """Run the search until one more candidate is found (``True``) or it ends (``False``)."""
        if self.done:
            return False
        self._unpark()
        pending = self.pending
        while self._running():
            nxt = self.states[self.pos] if self.pos < len(self.states) else None
            if nxt is not None and (not pending or self.base + nxt[0] >= -pending[0][0]):
                built = self._expand(self.pos)
                self.pos += 1
                if built is None:
                    continue
                score, labels, extra, flipped = built
                if flipped is not None:
                    heapq.heappush(pending, (-flipped[0], next(self.tick), flipped[1]))
                if extra < 0:  # a repaired choice scores lower than its place in the stream: queue it
                    heapq.heappush(pending, (-score, next(self.tick), labels))
                    continue
            else:
                neg, _, labels = heapq.heappop(pending)
                score = -neg
            self.tries -= 1
            lkey = _labels_key(labels)
            if lkey in self.verdicts:  # another choice gave the same edits: same verdict, no second RDKit pass
                products = self.verdicts[lkey]
            else:
                products = _verdict(self.graph, self.reactants, labels, self.r_comp)
                self.verdicts[lkey] = products
            if products is None:
                continue
            key = tuple(products)
            if key in self.seen:
                continue
            self.seen.add(key)
            self.results.append(EditCandidate(products, score, labels))
            return True
        self.done = True
        self._free()
        return False

    def _free(self) -> None:
        """Drop the search state (the candidates found stay)."""
        self.factors, self.states, self.pending, self.p_prod = [], [], [], []
        self.cur_of, self.incident, self.verdicts, self._expanded = {}, {}, {}, {}
        self.assign = self.graph = self.r_comp = None  # type: ignore[assignment]
        self._caps, self._by_cap, self._packed = None, [], None

    def park(self) -> None:
        """Shrink a search that may be resumed later to its factors in flat arrays and its queue (a few KB
        instead of ~90); everything else (the k-best states, the assignment, the reactant graph) is rebuilt,
        identically, when it resumes. The candidates found stay."""
        if self.done or self._packed is not None:
            return
        kinds = array("b", (_KINDS.index(f.kind) for f in self.factors))
        keys = array("i", (x for f in self.factors for x in (f.key if f.kind == "pair" else (f.key, -1))))
        n_opts = array("b", (len(f.options) for f in self.factors))
        classes = array("b", (c for f in self.factors for c, _ in f.options))
        lps = array("f", (lp for f in self.factors for _, lp in f.options))  # float32 values: exact
        cur = array("b", (self.cur_of[f.key] for f in self.factors if f.kind == "pair"))
        p_prod = array("f", self.p_prod)
        pending = self.pending  # the queue stays as it is
        self._free()
        self.pending = pending
        self._packed = (kinds, keys, n_opts, classes, lps, cur, p_prod)

    def _unpark(self) -> None:
        if self._packed is None:
            return
        kinds, keys, n_opts, classes, lps, cur, p_prod = self._packed
        factors: list[_Factor] = []
        cur_of: dict[tuple[int, int], int] = {}
        at = 0
        pairs = iter(cur)
        for k, kind in enumerate(kinds):
            i, j = keys[2 * k], keys[2 * k + 1]
            key = (i, j) if _KINDS[kind] == "pair" else i
            opts = [(classes[at + o], lps[at + o]) for o in range(n_opts[k])]
            at += n_opts[k]
            factors.append(_Factor(_KINDS[kind], key, opts))
            if _KINDS[kind] == "pair":
                cur_of[key] = next(pairs)
        self.factors, self.cur_of = factors, cur_of
        self.p_prod = list(p_prod)
        self.states = _kbest(factors, *self._widths)  # the same list again: pos still points into it
        self.graph = reactant_graph(self.reactants)
        self.h_count = self.graph.h
        self.r_comp = _composition(self.reactants) if self.conserve else None
        self.assign = _Assigner(factors, cur_of)
        self.incident = {}
        for k, f in enumerate(factors):
            if f.kind == "pair" and cur_of[f.key] != NONE:
                for g in f.key:
                    self.incident.setdefault(g, []).append(k)
        self._packed = None

    def bound(self) -> float:
        """An upper bound on the score of every candidate not produced yet (``-inf`` once the search ended).

        The scores of the queued candidates are known, and so are those of the states left, once expanded
        (repair, labels, selection: :meth:`_expand`, which the search reuses). States are expanded in the order
        of a cheap cap on their score (``base + delta`` plus the best gain of lowering each chosen existing
        bond, :func:`_repair` only lowers existing bonds; the selection's log-probability is <= 0, a flipped
        selection scores at most its parent) until no state left can beat the bound. Candidates whose edits
        were already judged (dropped, or giving products already found) cannot add a candidate and are left
        out."""
        if self.done:
            return -math.inf
        self._unpark()
        if not self._running():
            return -math.inf
        if self._caps is None:
            self._caps = [self.base + d + (self._repair_gain(ch) if self.repair else 0.0) for d, ch in self.states]
            self._by_cap = sorted(range(len(self.states)), key=lambda i: -self._caps[i])  # type: ignore[index]
        cap = max((-neg for neg, _, lab in self.pending if not self._spent(lab)), default=-math.inf)
        for i in self._by_cap:
            if i < self.pos:
                continue
            if self._caps[i] + _slack(self._caps[i]) <= cap:
                break
            built = self._expand(i)
            if built is None:
                continue
            score, labels, _, flipped = built
            if score > cap and not self._spent(labels):
                cap = score
            if flipped is not None and flipped[0] > cap and not self._spent(flipped[1]):
                cap = flipped[0]
        return cap

    def _spent(self, labels: EditLabels) -> bool:
        """Whether these edits were judged already and cannot give a new candidate."""
        key = _labels_key(labels)
        if key not in self.verdicts:
            return False
        products = self.verdicts[key]
        return products is None or tuple(products) in self.seen

    def _expand(self, i: int) -> tuple[float, EditLabels, float, tuple[float, EditLabels] | None] | None:
        """State ``i`` as the search meets it (memoised): ``(score, labels, repair's score change, flipped
        selection as (score, labels) or None)``; ``None`` when the state gives no candidate."""
        if i in self._expanded:
            return self._expanded[i]
        delta, choice = self.states[i]
        fixed = (
            _repair(self.factors, choice, self.cur_of, self.h_count, self.incident, assign=self.assign)
            if self.repair
            else (choice, 0.0, None)
        )
        out = None
        if fixed is not None:
            choice, extra, assigned = fixed
            built = _state_labels(
                self.factors,
                choice,
                self.cur_of,
                self.n_atoms,
                self.n_react,
                self.p_prod,
                self.h_count,
                assign=self.assign,
                assigned=assigned,
            )
            if built is not None:
                labels, sel_lp, flip = built
                score = self.base + delta + extra + sel_lp
                flipped = None
                if flip is not None and abs(flip[1]) < self.flip_margin:
                    flipped = (score + flip[2], replace(labels, product_atoms=flip[0]))
                out = (score, labels, extra, flipped)
        self._expanded[i] = out
        return out

    def _repair_gain(self, choice: dict[int, int]) -> float:
        gain = 0.0
        for k, o in choice.items():
            f = self.factors[k]
            if f.kind != "pair" or self.cur_of[f.key] == NONE:
                continue
            c_now, lp_now = f.options[o]
            best = max((lp for c, lp in f.options if BOND_VALENCE[c] < BOND_VALENCE[c_now]), default=-math.inf)
            gain += max(0.0, best - lp_now)
        return gain
