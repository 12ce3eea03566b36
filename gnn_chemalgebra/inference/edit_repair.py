"""Validity repair for the edit beam: the factors of one reaction (a bond pair, an atom's hydrogen residual,
its charge change, each with its options), the connected components of a bond set, and the repair of a joint
choice whose edited product RDKit refuses or whose composition does not balance (:func:`_repair`: the cheapest
changes that make it valid, scored against the beam's bound). Imports nothing else of the edit decoder;
:mod:`.edit_beam` builds on it.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..chem.composition import composition_items
from ..chem.edits import NONE, EditLabelError, EditLabels, ReactantGraph, edited_products
from ..chem.leftover import leftover_for_composition
from ..data.edit_dataset import (
    BOND_VALENCE,
    N_H_CLASSES,
    Q_ZERO,
    h_delta_from_residual,
    valence_change,
)
from ..errors import ChemistryError

_KINDS = ("pair", "h", "q")


@dataclass
class _Factor:
    kind: str  # "pair" | "h" | "q"
    key: Any  # (i, j) for pairs, atom index otherwise
    options: list[tuple[int, float]]  # (class, log-prob), best first


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
