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
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
from torch_geometric.data import Batch

from ..chem.composition import composition_items
from ..chem.edits import NONE, EditLabelError, EditLabels, ReactantGraph, edited_products, reactant_graph
from ..chem.leftover import leftover_for_composition
from ..data.edit_dataset import (
    BOND_VALENCE,
    EDIT_FEATURIZER_VERSION,
    Q_ZERO,
    EditData,
    GraphCache,
    h_delta_from_residual,
    reaction_graph,
    valence_change,
)
from ..errors import ChemAlgebraError, ChemistryError, InputError
from ..models.edit_model import EditModel, build_edit_model

BUNDLED_CHECKPOINT = Path(__file__).resolve().parents[1] / "checkpoints" / "edit_default.pt"  # package data
DEFAULT_CHECKPOINT = Path("runs/edits_cpu/best.pt")  # a local training run (configs/edits_cpu.yaml)
CHECKPOINT_ENV = "GNNCA_EDIT_CHECKPOINT"


@dataclass
class EditCandidate:
    """One decoded product set: main products (canonical SMILES, sorted), score, and the edits behind it."""

    products: list[str]
    score: float
    labels: EditLabels


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
    return [list(zip(i, x, strict=True)) for i, x in zip(idx.tolist(), v.tolist(), strict=True)]


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
        nxt = [
            (delta + lp - best, (*ch, (k, o)) if o else ch) for delta, ch in states for o, (_, lp) in enumerate(opts)
        ]
        states = heapq.nlargest(width, nxt, key=_first)
    return [(delta, dict(ch)) for delta, ch in states]


def _first(s: tuple[float, Any]) -> float:
    return s[0]


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
    groups: dict[int, list[int]] = {}
    for x in range(n):
        groups.setdefault(find(x), []).append(x)
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
    factors, cur_of = _factors(out, data, n_nonbond, 3)
    base = sum(f.options[0][1] for f in factors)
    n_react = int(data.n_react)
    p_prod = torch.sigmoid(out["prod"][:n_react].float()).tolist()
    results: list[EditCandidate] = []
    seen: set[tuple[str, ...]] = set()
    tries = max_tries or 4 * beam
    spare = 2 * tries  # extra tries while nothing valid has been found yet
    r_comp = _composition(reactants) if conserve else None
    graph = reactant_graph(reactants)  # parsed once: every candidate copies it
    h_count = graph.h
    assign = _Assigner(factors, cur_of)
    verdicts: dict[tuple, list[str] | None] = {}  # labels -> valid balanced products (None: dropped)
    incident: dict[int, list[int]] = {}
    for k, f in enumerate(factors):
        if f.kind == "pair" and cur_of[f.key] != NONE:
            for g in f.key:
                incident.setdefault(g, []).append(k)
    states = iter(_kbest(factors, n_uncertain, width or max(8 * beam, 48)))
    pending: list[tuple[float, int, EditLabels]] = []  # heap of (-score, tie-break, labels)
    tick = itertools.count()
    nxt = next(states, None)
    while (tries > 0 or (not results and tries > -spare)) and len(results) < beam and (nxt is not None or pending):
        if nxt is not None and (not pending or base + nxt[0] >= -pending[0][0]):
            delta, choice = nxt
            nxt = next(states, None)
            fixed = _repair(factors, choice, cur_of, h_count, incident, assign=assign) if repair else (choice, 0.0)
            if fixed is None:
                continue
            choice, extra = fixed
            built = _state_labels(factors, choice, cur_of, n_atoms, n_react, p_prod, h_count, assign=assign)
            if built is None:
                continue
            labels, sel_lp, flip = built
            score = base + delta + extra + sel_lp
            if flip is not None and abs(flip[1]) < flip_margin:
                alt = replace(labels, product_atoms=flip[0])
                heapq.heappush(pending, (-(score + flip[2]), next(tick), alt))
            if extra < 0:  # a repaired choice scores lower than its place in the stream: queue it
                heapq.heappush(pending, (-score, next(tick), labels))
                continue
        else:
            neg, _, labels = heapq.heappop(pending)
            score = -neg
        tries -= 1
        lkey = _labels_key(labels)
        if lkey in verdicts:  # another choice gave the same edits: same verdict, no second RDKit pass
            products = verdicts[lkey]
        else:
            products = _verdict(graph, reactants, labels, r_comp)
            verdicts[lkey] = products
        if products is None:
            continue
        key = tuple(products)
        if key in seen:
            continue
        seen.add(key)
        results.append(EditCandidate(products, score, labels))
    return results


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
) -> tuple[dict[int, int], float] | None:
    """Valence repair (rexgen enforces valences too): while an atom would end with negative hydrogens, lower
    the order of its existing bond whose lower-order option costs least. Returns ``(choice, log-prob change)``,
    or ``None`` when no incident bond can give the valence back."""
    assign = assign or _Assigner(factors, cur_of)
    choice = dict(choice)
    extra = 0.0
    for _ in range(rounds + 1):
        bonds, h_cls, _ = assign(choice)
        dv = valence_change(EditLabels(n_atoms=[], bonds=bonds), cur_of)
        bad = None
        for g, d in dv.items():
            dh = h_delta_from_residual(h_cls[g], d)
            if dh is not None and h_count[g] + dh < 0:
                bad = g
                break
        if bad is None:
            return choice, extra
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


def _state_labels(
    factors: Sequence[_Factor],
    choice: dict[int, int],
    cur_of: dict[tuple[int, int], int],
    n_atoms: Sequence[int],
    n_react: int,
    p_prod: list[float],
    h_count: Sequence[int],
    assign: _Assigner | None = None,
) -> tuple[EditLabels, float, tuple[list[int], float, float] | None] | None:
    """Labels of one joint choice, the log-probability of its component selection, and the best flip
    ``(product atoms, vote - 0.5, score change)`` (``None`` when no other selection keeps a product).

    ``None`` when the choice is inconsistent before RDKit sees it (half an aromatic edit, or an atom left
    with fewer than zero hydrogens: a bond formed at an atom without H and nothing broken there), so that
    such choices do not use up the decoder's tries."""
    bonds, h_cls, q_cls = (assign or _Assigner(factors, cur_of))(choice)
    labels = EditLabels(n_atoms=list(n_atoms), bonds=bonds)
    dv = valence_change(labels, cur_of)
    for g in range(n_react):
        dh = h_delta_from_residual(h_cls[g], dv.get(g, 0.0))
        if dh is None or h_count[g] + dh < 0:
            return None
        if dh:
            labels.h_delta[g] = dh
        if q_cls[g] != Q_ZERO:
            labels.charge_delta[g] = q_cls[g] - Q_ZERO
    changed = {(i, j): c for i, j, c in bonds}
    edges = [(i, j) for (i, j), c in cur_of.items() if changed.get((i, j), c) != NONE]
    edges += [(i, j) for (i, j), c in changed.items() if (i, j) not in cur_of and c != NONE]
    comps = _components(n_react, edges)
    if not comps:
        return None
    eps = 1e-6
    means = [min(max(sum(p_prod[a] for a in c) / len(c), eps), 1 - eps) for c in comps]
    sel = [m > 0.5 for m in means]
    if not any(sel):
        sel[max(range(len(comps)), key=means.__getitem__)] = True
    sel_lp = sum(math.log(m if s else 1 - m) for m, s in zip(means, sel, strict=True))
    labels.product_atoms = sorted(a for c, s in zip(comps, sel, strict=True) if s for a in c)
    flip = None
    order = sorted(range(len(comps)), key=lambda k: abs(means[k] - 0.5))
    for k in order:
        alt = list(sel)
        alt[k] = not alt[k]
        if any(alt):
            m = means[k]
            gain = math.log(1 - m if sel[k] else m) - math.log(m if sel[k] else 1 - m)
            flip = (sorted(a for c, s in zip(comps, alt, strict=True) if s for a in c), m - 0.5, gain)
            break
    return labels, sel_lp, flip


class EditPredictor:
    """A trained :class:`EditModel` with its featurisation; batches reactions through the model, then decodes."""

    def __init__(self, model: EditModel, device: str | torch.device = "cpu") -> None:
        self.model = model.to(device).eval()
        self.device = torch.device(device)
        self.cache = GraphCache()

    @classmethod
    def from_checkpoint(cls, path: str | Path, device: str | torch.device = "cpu") -> EditPredictor:
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
        return cls(model, device)

    @torch.no_grad()
    def predict(
        self,
        reactions: Sequence[tuple[Sequence[str], Sequence[str]]],
        beam: int = 5,
        batch_size: int = 32,
        **decode_kw: Any,
    ) -> list[list[EditCandidate]]:
        """Ranked candidates per ``(reactants, reagents)``; an unparsable or empty reaction gets ``[]``."""
        results: list[list[EditCandidate]] = [[] for _ in reactions]
        for start in range(0, len(reactions), batch_size):
            items, datas = [], []
            for k in range(start, min(start + batch_size, len(reactions))):
                reactants, reagents = list(reactions[k][0]), list(reactions[k][1])
                try:
                    data = reaction_graph(reactants, reagents, self.cache)
                except (EditLabelError, ChemAlgebraError, ValueError, RuntimeError):
                    continue
                if int(data.n_react) < 1:
                    continue
                n_atoms = [int(self.cache.get(s)[0]["z"].numel()) for s in reactants]
                items.append((k, reactants, n_atoms))
                datas.append(data)
            if not datas:
                continue
            batch = Batch.from_data_list(datas).to(self.device)
            out = self.model(batch)
            n_pairs = [int(d.pair_index.size(1)) for d in datas]
            n_nodes = [int(d.num_nodes) for d in datas]
            pairs = out["pair"].cpu().split(n_pairs)
            atoms = {k: out[k].cpu().split(n_nodes) for k in ("h", "q", "prod")}
            for m, ((k, reactants, n_atoms), data) in enumerate(zip(items, datas, strict=True)):
                one = {"pair": pairs[m], **{a: atoms[a][m] for a in atoms}}
                results[k] = decode_reaction(reactants, n_atoms, one, data, beam, **decode_kw)
        return results


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
