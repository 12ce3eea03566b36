"""Edit beam: from the edit model's pair/atom probabilities to ranked, RDKit-valid main-product sets.

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

import functools
import heapq
import itertools
import math
import os
from array import array
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from ..chem.composition import composition_items
from ..chem.edits import NONE, EditLabelError, EditLabels, ReactantGraph, edited_products, reactant_graph
from ..chem.leftover import leftover_for_composition
from ..data.edit_dataset import (
    BOND_VALENCE,
    EDIT_FEATURIZER_VERSION,
    N_H_CLASSES,
    Q_ZERO,
    EditData,
    GraphCache,
    _pair_attrs,
    h_delta_from_residual,
    reaction_graph,
    valence_change,
)
from ..errors import ChemAlgebraError, ChemistryError, InputError
from ..io import checkpoint_paths
from ..models.edit_model import EditEnsemble, EditModel, build_edit_model

BUNDLED_CHECKPOINT = Path(__file__).resolve().parents[1] / "checkpoints" / "edit_default.pt"  # package data
DEFAULT_CHECKPOINT = Path("runs/edits_cpu/best.pt")  # a local training run (configs/edits_cpu.yaml)
CHECKPOINT_ENV = "GNNCA_EDIT_CHECKPOINT"


@dataclass
class EditCandidate:
    """One decoded product set: main products (canonical SMILES, sorted), score, and the edits behind it."""

    products: list[str]
    score: float
    labels: EditLabels


_KINDS = ("pair", "h", "q")


@dataclass
class _Factor:
    kind: str  # "pair" | "h" | "q"
    key: Any  # (i, j) for pairs, atom index otherwise
    options: list[tuple[int, float]]  # (class, log-prob), best first


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


def _components(n: int, edges: Sequence[tuple[int, int]]) -> list[list[int]]:
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in edges:
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[ri] = rj
    # each atom's root, atoms in ascending order (the root of an atom is unique, so the groups and their
    # order, by smallest member, are find()'s); every atom on the way gets the root written back, so later
    # atoms find it in one step and a long chain (union without ranks builds one) is walked once, not per atom
    groups: dict[int, list[int]] = {}
    for x in range(n):
        r = parent[x]
        while parent[r] != r:
            r = parent[r]
        y = x
        while parent[y] != r:
            parent[y], y = r, parent[y]
        groups.setdefault(r, []).append(x)
    return list(groups.values())


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


def _slack(x: float) -> float:
    """Room for the order of floating-point sums when comparing scores with a bound."""
    return 1e-9 * (1.0 + abs(x)) if math.isfinite(x) else 0.0


def _labels_key(labels: EditLabels) -> tuple:
    return (
        tuple(labels.bonds),
        tuple(sorted(labels.h_delta.items())),
        tuple(sorted(labels.charge_delta.items())),
        tuple(sorted(labels.chiral.items())),
        tuple(sorted(labels.bond_stereo.items())),
        tuple(labels.product_atoms),
    )


def _verdict(
    graph: ReactantGraph, reactants: Sequence[str], labels: EditLabels, r_comp: Counter | None
) -> list[str] | None:
    """The products of ``labels`` when RDKit accepts them and they balance (``r_comp`` given), else ``None``.

    The balance is first tested on the composition read off the sanitised graph
    (:func:`~gnn_chemalgebra.chem.edits.edited_products`), so that a candidate that cannot balance is
    rejected before its products are written; one that passes is tested again on the written products."""
    accept = None if r_comp is None else functools.partial(_balances_composition, reactants, r_comp)
    try:
        products = edited_products(graph, labels, accept=accept)
    except (EditLabelError, RuntimeError, ValueError):
        return None
    if not products or (r_comp is not None and not _balances(reactants, products, r_comp)):
        return None
    return products


def _composition(smiles: Sequence[str]) -> Counter:
    total: Counter = Counter()
    for s in smiles:
        total.update(dict(composition_items(s)))
    return total


def _balances(reactants: Sequence[str], products: Sequence[str], r_comp: Counter) -> bool:
    """No product atom beyond the reactants, and a leftover chain RDKit accepts for the difference."""
    try:
        return _balances_composition(reactants, r_comp, _composition(products))
    except (EditLabelError, ChemistryError):
        return False


def _balances_composition(reactants: Sequence[str], r_comp: Counter, p_comp: Counter) -> bool:
    """:func:`_balances` for products given by their composition."""
    try:
        if p_comp - r_comp:
            return False
        return not (r_comp - p_comp) or leftover_for_composition(reactants, p_comp) is not None
    except ChemistryError:
        return False


class _Assigner:
    """Changed bonds, H-residual classes and charge classes of a joint choice: the argmax assignment computed
    once per reaction, then only the (at most ``n_uncertain`` + repaired) chosen factors overridden."""

    def __init__(self, factors: Sequence[_Factor], cur_of: dict[tuple[int, int], int]) -> None:
        self.factors, self.cur_of = factors, cur_of
        self.bonds: dict[tuple[int, int], int] = {}
        self.h_cls: dict[int, int] = {}
        self.q_cls: dict[int, int] = {}
        for f in factors:
            self._set(f, f.options[0][0], self.bonds, self.h_cls, self.q_cls)

    def _set(self, f: _Factor, c: int, bonds: dict, h_cls: dict, q_cls: dict) -> None:
        if f.kind == "pair":
            if c != self.cur_of[f.key]:
                bonds[f.key] = c
            else:
                bonds.pop(f.key, None)
        elif f.kind == "h":
            h_cls[f.key] = c
        else:
            q_cls[f.key] = c

    def __call__(self, choice: dict[int, int]) -> tuple[list[tuple[int, int, int]], dict[int, int], dict[int, int]]:
        bonds, h_cls, q_cls = dict(self.bonds), dict(self.h_cls), dict(self.q_cls)
        for k, o in choice.items():
            f = self.factors[k]
            self._set(f, f.options[o][0], bonds, h_cls, q_cls)
        return sorted((i, j, c) for (i, j), c in bonds.items()), h_cls, q_cls


def _repair(
    factors: Sequence[_Factor],
    choice: dict[int, int],
    cur_of: dict[tuple[int, int], int],
    h_count: Sequence[int],
    incident: dict[int, list[int]],
    rounds: int = 3,
    assign: _Assigner | None = None,
) -> tuple[dict[int, int], float, _Assigned] | None:
    """Valence repair (rexgen enforces valences too): while an atom would end with negative hydrogens, lower
    the order of its existing bond whose lower-order option costs least. Returns ``(choice, log-prob change,
    its assignment)`` (the assignment as :func:`_state_labels` reads it), or ``None`` when no incident bond
    can give the valence back."""
    assign = assign or _Assigner(factors, cur_of)
    choice = dict(choice)
    extra = 0.0
    for _ in range(rounds + 1):
        bonds, h_cls, q_cls = assign(choice)
        dv = valence_change(EditLabels(n_atoms=[], bonds=bonds), cur_of)
        bad = None
        for g, d in dv.items():
            dh = h_delta_from_residual(h_cls[g], d)
            if dh is not None and h_count[g] + dh < 0:
                bad = g
                break
        if bad is None:
            return choice, extra, (bonds, h_cls, q_cls, dv)
        best: tuple[float, int, int] | None = None
        for k in incident.get(bad, []):
            f = factors[k]
            o_now = choice.get(k, 0)
            c_now, lp_now = f.options[o_now]
            for o, (c, lp) in enumerate(f.options):
                if BOND_VALENCE[c] < BOND_VALENCE[c_now] and (best is None or lp - lp_now > best[0]):
                    best = (lp - lp_now, k, o)
        if best is None:
            return None
        extra += best[0]
        choice[best[1]] = best[2]
    return None


# a joint choice's changed bonds, H-residual and charge classes (:class:`_Assigner`) and valence changes
_Assigned = tuple[list[tuple[int, int, int]], dict[int, int], dict[int, int], dict[int, float]]

# h_delta_from_residual(h_class, 0.0) per residual class (class indices come from the model's N_H_CLASSES outputs)
_DH_NO_BOND_EDIT: tuple[int | None, ...] = tuple(h_delta_from_residual(h, 0.0) for h in range(N_H_CLASSES))


def _state_labels(
    factors: Sequence[_Factor],
    choice: dict[int, int],
    cur_of: dict[tuple[int, int], int],
    n_atoms: Sequence[int],
    n_react: int,
    p_prod: list[float],
    h_count: Sequence[int],
    assign: _Assigner | None = None,
    assigned: _Assigned | None = None,
) -> tuple[EditLabels, float, tuple[list[int], float, float] | None] | None:
    """Labels of one joint choice, the log-probability of its component selection, and the best flip
    ``(product atoms, vote - 0.5, score change)`` (``None`` when no other selection keeps a product).

    ``None`` when the choice is inconsistent before RDKit sees it (half an aromatic edit, or an atom left
    with fewer than zero hydrogens: a bond formed at an atom without H and nothing broken there), so that
    such choices do not use up the decoder's tries. ``assigned``: the choice's assignment when the caller has
    it (:func:`_repair`'s)."""
    if assigned is None:
        bonds, h_cls, q_cls = (assign or _Assigner(factors, cur_of))(choice)
        dv = valence_change(EditLabels(n_atoms=[], bonds=bonds), cur_of)
    else:
        bonds, h_cls, q_cls, dv = assigned
    labels = EditLabels(n_atoms=list(n_atoms), bonds=bonds)
    h_delta, charge_delta, table = labels.h_delta, labels.charge_delta, _DH_NO_BOND_EDIT
    for g in range(n_react):
        d = dv.get(g)  # most atoms have no bond edit: their dH is the residual class's alone (a table look-up)
        dh = table[h_cls[g]] if d is None else h_delta_from_residual(h_cls[g], d)
        if dh is None or h_count[g] + dh < 0:
            return None
        if dh:
            h_delta[g] = dh
        if q_cls[g] != Q_ZERO:
            charge_delta[g] = q_cls[g] - Q_ZERO
    # the bonds after the edits (their order does not matter to the components)
    changed = {(i, j): c for i, j, c in bonds}
    edges = [key for key, c in cur_of.items() if changed.get(key, c) != NONE]
    edges += [key for key, c in changed.items() if key not in cur_of and c != NONE]
    comps = _components(n_react, edges)
    if not comps:
        return None
    eps = 1e-6
    # the same sums in the same order as sum(p_prod[a] for a in c)
    means = [min(max(sum(map(p_prod.__getitem__, c)) / len(c), eps), 1 - eps) for c in comps]
    sel = [m > 0.5 for m in means]
    if not any(sel):
        sel[max(range(len(comps)), key=means.__getitem__)] = True
    sel_lp = sum(math.log(m if s else 1 - m) for m, s in zip(means, sel, strict=True))
    labels.product_atoms = _atoms_of(comps, sel)
    flip = None
    order = sorted(range(len(comps)), key=lambda k: abs(means[k] - 0.5))
    for k in order:
        alt = list(sel)
        alt[k] = not alt[k]
        if any(alt):
            m = means[k]
            gain = math.log(1 - m if sel[k] else m) - math.log(m if sel[k] else 1 - m)
            flip = (_atoms_of(comps, alt), m - 0.5, gain)
            break
    return labels, sel_lp, flip


def _atoms_of(comps: list[list[int]], sel: list[bool]) -> list[int]:
    """The atoms of the selected components, ascending (each component lists its atoms ascending)."""
    chosen = [c for c, s in zip(comps, sel, strict=True) if s]
    return list(chosen[0]) if len(chosen) == 1 else sorted(itertools.chain.from_iterable(chosen))


class EditPredictor:
    """A trained :class:`EditModel` with its featurisation; batches reactions through the model, then decodes."""

    def __init__(self, model: EditModel | EditEnsemble, device: str | torch.device = "cpu") -> None:
        self.model = model.to(device).eval()
        self.device = torch.device(device)
        self.cache = GraphCache()

    @classmethod
    def from_checkpoint(cls, path: str | Path, device: str | torch.device = "cpu") -> EditPredictor:
        """One checkpoint, or several joined by commas (``a.pt,b.pt``): an ensemble whose heads' log-probabilities
        are averaged (:class:`~gnn_chemalgebra.models.edit_model.EditEnsemble`)."""
        models = [cls._load_model(p, device) for p in checkpoint_paths(path)]
        return cls(models[0] if len(models) == 1 else EditEnsemble(models), device)

    @staticmethod
    def _load_model(path: str | Path, device: str | torch.device) -> EditModel:
        from ..checkpoint import load_checkpoint

        ck = load_checkpoint(path, map_location=device)
        meta = ck.get("meta", {})
        hp = meta.get("hparams")
        if hp is None or meta.get("kind") != "edits":
            raise InputError("not an edit-model checkpoint", path=str(path))
        if int(meta.get("featurizer_version", -1)) != EDIT_FEATURIZER_VERSION:
            raise InputError("edit checkpoint was written by another featuriser version", path=str(path))
        probe = reaction_graph(["CC"], [])
        if probe.x.size(1) != hp["x_dim"] or probe.edge_attr.size(1) != hp["edge_dim"]:
            raise InputError("atom features changed since this edit checkpoint was trained", path=str(path))
        model = build_edit_model(hp)
        model.load_state_dict(ck["model"])
        return model

    def predict(
        self,
        reactions: Sequence[tuple[Sequence[str], Sequence[str]]],
        beam: int = 5,
        batch_size: int = 32,
        **decode_kw: Any,
    ) -> list[list[EditCandidate]]:
        """Ranked candidates per ``(reactants, reagents)``; an unparsable or empty reaction gets ``[]``."""
        return [list(b) for b in self.beams(reactions, beam, batch_size, **decode_kw)]

    @torch.no_grad()
    def beams(
        self,
        reactions: Sequence[tuple[Sequence[str], Sequence[str]]],
        beam: int = 5,
        batch_size: int = 32,
        **decode_kw: Any,
    ) -> list[EditBeam | tuple[()]]:
        """:meth:`predict` with the network run now (batched) and each reaction's search left to run lazily
        (:class:`EditBeam`); ``()`` for an unparsable or empty reaction."""
        results: list[EditBeam | tuple[()]] = [() for _ in reactions]
        for start in range(0, len(reactions), batch_size):
            items = []
            for k in range(start, min(start + batch_size, len(reactions))):
                reactants, reagents = list(reactions[k][0]), list(reactions[k][1])
                try:
                    graphs = [self.cache.get(s) for s in (*reactants, *reagents)]
                except (EditLabelError, ChemAlgebraError, ValueError, RuntimeError):
                    continue
                n_atoms = [int(g[0]["z"].numel()) for g in graphs[: len(reactants)]]
                if sum(n_atoms) < 1:
                    continue
                items.append((k, reactants, n_atoms, graphs))
            if not items:
                continue
            batch, views = _collate_reactions([(n_atoms, graphs) for _, _, n_atoms, graphs in items])
            out = self.model(batch.to(self.device))
            pairs = out["pair"].cpu().split([int(v.pair_cur.numel()) for v in views])
            atoms = {a: out[a].cpu().split(batch.nodes) for a in ("h", "q", "prod")}
            for m, ((k, reactants, n_atoms, _), view) in enumerate(zip(items, views, strict=True)):
                one = {"pair": pairs[m], **{a: atoms[a][m] for a in atoms}}
                results[k] = EditBeam(reactants, n_atoms, one, view, beam, **decode_kw)
        return results


@dataclass
class ReactionPairs:
    """What the beam reads of one reaction's graph (:class:`EditData` has the same fields): reactant atoms,
    candidate pairs ``(i, j)``, ``i < j``, in reactant atom numbering, and their current bond class."""

    n_react: int
    pair_index: torch.Tensor
    pair_cur: torch.Tensor


@dataclass
class ReactionBatch:
    """The fields of ``Batch.from_data_list([reaction_graph(...), ...])`` that :class:`EditModel` reads."""

    z: torch.Tensor
    x: torch.Tensor
    edge_index: torch.Tensor
    edge_attr: torch.Tensor
    batch: torch.Tensor
    pair_index: torch.Tensor
    pair_cur: torch.Tensor
    pair_dist: torch.Tensor
    num_graphs: int
    nodes: list[int]  # atoms per reaction (reactants, then reagents)

    def to(self, device: torch.device) -> ReactionBatch:
        if device.type == "cpu":
            return self
        moved = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in vars(self).items()}
        return ReactionBatch(**moved)


_TRIU: dict[int, torch.Tensor] = {}
_TRIU_CACHED = 256  # sizes kept (0.5 MB at 256, 45 MB if every size up to it is met); larger ones are not


def _triu(n: int) -> torch.Tensor:
    """``torch.triu_indices(n, n, offset=1)``, shared per ``n`` up to :data:`_TRIU_CACHED` (read only)."""
    hit = _TRIU.get(n)
    if hit is None:
        hit = torch.triu_indices(n, n, offset=1)
        if n <= _TRIU_CACHED:
            _TRIU[n] = hit
    return hit


def _collate_reactions(
    reactions: Sequence[tuple[Sequence[int], Sequence[tuple[dict[str, torch.Tensor], torch.Tensor, torch.Tensor]]]],
) -> tuple[ReactionBatch, list[ReactionPairs]]:
    """The model's batch of several reactions, each given by its reactant atom counts and the
    :meth:`GraphCache.get` entries of its reactants then reagents, built at once over the whole batch: every
    field equal to collating :func:`reaction_graph` of each (every reactant pair; the same integer offsets and
    table look-ups, :func:`_pair_attrs` over all reactions' pairs together), plus each reaction's pairs."""
    zs, xs, eis, eas = [], [], [], []
    mol_atoms, mol_edges, mol_reagent = [], [], []
    dists, classes, sizes, mol_of, local = [], [], [], [], []
    nodes, n_react, node_start, react_start = [], [], [], []
    n_nodes = n_reacting = 0
    for atoms, graphs in reactions:
        node_start.append(n_nodes)
        react_start.append(n_reacting)
        for k, (g, dist, cls) in enumerate(graphs):
            n = int(g["z"].numel())
            zs.append(g["z"])
            xs.append(g["x"])
            eis.append(g["edge_index"])
            eas.append(g["edge_attr"])
            mol_atoms.append(n)
            mol_edges.append(int(g["edge_index"].size(1)))
            reagent = k >= len(atoms)
            mol_reagent.append(float(reagent))
            if not reagent:
                mol_of += [len(sizes)] * n
                local += range(n)
                dists.append(dist)
                classes.append(cls)
                sizes.append(n)
            n_nodes += n
        nodes.append(n_nodes - node_start[-1])
        n_react.append(sum(atoms))
        n_reacting += n_react[-1]
    atoms_t = torch.tensor(mol_atoms, dtype=torch.long)
    first = torch.cumsum(atoms_t, 0) - atoms_t  # first atom of each molecule in the batch
    flags = torch.repeat_interleave(torch.tensor(mol_reagent), atoms_t)
    tri = [_triu(n) for n in n_react]
    n_pairs = torch.tensor([int(t.size(1)) for t in tri], dtype=torch.long)
    pair_local = torch.cat(tri, dim=1)
    react_pairs = pair_local + torch.repeat_interleave(torch.tensor(react_start, dtype=torch.long), n_pairs)
    cur, dcls = _pair_attrs(react_pairs[0], react_pairs[1], mol_of, local, dists, classes, sizes)
    batch = ReactionBatch(
        z=torch.cat(zs),
        x=torch.cat([torch.cat(xs), flags.unsqueeze(1)], dim=1),
        edge_index=torch.cat(eis, dim=1) + torch.repeat_interleave(first, torch.tensor(mol_edges, dtype=torch.long)),
        edge_attr=torch.cat(eas),
        batch=torch.repeat_interleave(torch.arange(len(reactions)), torch.tensor(nodes, dtype=torch.long)),
        pair_index=pair_local + torch.repeat_interleave(torch.tensor(node_start, dtype=torch.long), n_pairs),
        pair_cur=cur,
        pair_dist=dcls,
        num_graphs=len(reactions),
        nodes=nodes,
    )
    counts = n_pairs.tolist()
    views = [ReactionPairs(n, t, c) for n, t, c in zip(n_react, tri, cur.split(counts), strict=True)]
    return batch, views


def default_checkpoint() -> Path:
    """``$GNNCA_EDIT_CHECKPOINT``, else the bundled model, else the local training run."""
    env = os.environ.get(CHECKPOINT_ENV)
    if env:
        return Path(env)
    return BUNDLED_CHECKPOINT if BUNDLED_CHECKPOINT.exists() else DEFAULT_CHECKPOINT


@functools.lru_cache(maxsize=4)
def _cached_predictor(path: str) -> EditPredictor:
    return EditPredictor.from_checkpoint(path)


def load_predictor(checkpoint: str | Path | EditPredictor | None = None) -> EditPredictor:
    """The predictor of ``checkpoint`` (a path, an already loaded predictor, or the default), loaded once."""
    if isinstance(checkpoint, EditPredictor):
        return checkpoint
    return _cached_predictor(str(Path(checkpoint) if checkpoint is not None else default_checkpoint()))


def predict_products(
    reactants: list[str],
    reagents: list[str],
    beam: int = 5,
    checkpoint: str | Path | EditPredictor | None = None,
) -> list[list[str]]:
    """Ranked main-product sets (canonical SMILES, sorted within a set) of one reaction, best first.

    Main products only: the artificial leftover chain is exact given them
    (:func:`~gnn_chemalgebra.chem.leftover.leftover_from_composition`). Default checkpoint: ``$GNNCA_EDIT_CHECKPOINT``
    or ``runs/edits_cpu/best.pt``.
    """
    pred = load_predictor(checkpoint)
    return [c.products for c in pred.predict([(reactants, reagents)], beam=beam)[0]]


def candidate_logprob_gap(cands: Sequence[EditCandidate]) -> float:
    """Score margin between the best two candidates (``inf`` with fewer than two): a confidence signal."""
    if len(cands) < 2:
        return math.inf
    return cands[0].score - cands[1].score
