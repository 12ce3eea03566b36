"""Featurisation of a reaction bag: one :class:`~.bagdata.BagData` = the disjoint union of its DISTINCT molecules.

Contract (what the network may see):

* node features: RDKit atom graphs (SMILES) or element/count nodes (formula: one node per element, plus a
  ``charge`` node for ions; the count is a within-molecule composition, not a coefficient);
* ``atom2mol``: node -> molecule index inside the bag (batching adds the molecules before the bag);
* ``mol_feat``: SCALE-FREE multiplicity features only (see :func:`multiplicity_features`), identical when every
  coefficient is multiplied by a constant or shifted by one (S_in -> S_out);
* ``mol_coef``: raw total coefficients, for the algebra and for the deliberately naive ablation head only;
* ``mol_comp``: element-view composition per molecule (element counts + net charge), for the mass-balance penalty;
* ``ext_feat``: scale-free features of each Type-2 extent candidate for the learned scorer
  (:func:`extent_features`, :data:`N_EXTENT_FEATURES` columns): ranks and posterior masses, never magnitudes.

Distinct molecules are ordered by their string, so neither the line's shuffle nor its coefficients change the
graph. Molecule graphs (:mod:`.mol_graphs`) are cached by string, so the x5 draws of a base reaction share them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import torch

from ..algebra.extent import reactant_cap
from ..algebra.roles import ROLE_NU
from ..chem.molecule import composition
from ..errors import ChemAlgebraError
from .mol_graphs import (
    CHARGE_INDEX,
    COMP_DIM,
    ELEMENT_INDEX,
    ELEMENT_VOCAB,
    FORMULA_EDGE_DIM,
    FORMULA_X_DIM,
    SHARED_GRAPHS,
    SMILES_EDGE_DIM,
    SMILES_X_DIM,
    comp_vector,
    comp_vectors,
    element_index,
    formula_features,
    formula_graph,
    onehot,
    shared_smiles_graph,
    smiles_graph,
    smiles_graphs,
    warm_smiles_graphs,
)

if TYPE_CHECKING:
    from .bagdata import BagData

__all__ = [
    "CHARGE_INDEX",
    "COMP_DIM",
    "ELEMENT_INDEX",
    "ELEMENT_VOCAB",
    "FEATURIZER_VERSION",
    "FORMULA_EDGE_DIM",
    "FORMULA_X_DIM",
    "Featurizer",
    "N_COEF_CLASSES",
    "N_EXTENT_FEATURES",
    "N_MULT_FEATURES",
    "N_RAW_COEF",
    "SHARED_GRAPHS",
    "SMILES_EDGE_DIM",
    "SMILES_X_DIM",
    "comp_vector",
    "comp_vectors",
    "element_index",
    "extent_features",
    "formula_features",
    "formula_graph",
    "multiplicity_features",
    "raw_coef_features",
    "shared_smiles_graph",
    "smiles_graph",
    "smiles_graphs",
    "warm_smiles_graphs",
]

FEATURIZER_VERSION = 1

N_MULT_FEATURES = 6
N_RAW_COEF = 16  # one-hot of min(k, 15) + k/10 for the naive head
N_COEF_CLASSES = 16  # naive head: output coefficient 0..15
N_EXTENT_FEATURES = 7  # columns of extent_features


def _multiplicity_rows(totals: Sequence[int], nterms: Sequence[int]) -> list[list[float]]:
    distinct = sorted(set(totals))
    rank = {v: i for i, v in enumerate(distinct)}
    denom = max(len(distinct) - 1, 1)
    lo, hi = distinct[0], distinct[-1]
    one = float(len(distinct) == 1)
    return [
        [float(k == lo), float(k == hi), float(totals.count(k) > 1), rank[k] / denom, float(c > 1), one]
        for k, c in zip(totals, nterms, strict=False)
    ]


def _raw_coef_rows(totals: torch.Tensor) -> torch.Tensor:
    """:func:`raw_coef_features` of a long tensor of totals, computed as tensors (same numbers)."""
    rows = torch.zeros(totals.numel(), N_RAW_COEF)
    rows[torch.arange(totals.numel()), totals.clamp(0, N_RAW_COEF - 2)] = 1.0
    rows[:, N_RAW_COEF - 1] = (totals.double() / 10.0).float()
    return rows


def multiplicity_features(totals: Sequence[int], nterms: Sequence[int]) -> torch.Tensor:
    """Scale- and shift-free view of the bag's coefficients, one row per distinct molecule.

    Columns: [is the bag's minimum, is the maximum, ties with another molecule, dense rank / (#distinct - 1),
    appears in several terms, all molecules share one coefficient]. Depends only on the ORDER of the totals, so
    it is identical under k -> c*k and k -> k + s (and any other increasing map).
    """
    return torch.tensor(_multiplicity_rows(list(totals), nterms), dtype=torch.float)


def raw_coef_features(totals: Sequence[int]) -> torch.Tensor:
    """Raw magnitudes, for the NAIVE ablation head only (never the coefficient-blind network)."""
    rows = [onehot(min(k, N_RAW_COEF - 1), N_RAW_COEF - 1) + [k / 10.0] for k in totals]
    return torch.tensor(rows, dtype=torch.float)


def extent_features(
    cands: Sequence[int], groups: Mapping[str, Sequence[int]], nu: Mapping[str, int], post: Sequence[float]
) -> list[list[float]]:
    """Scale-free features of each extent candidate for the learned scorer, :data:`N_EXTENT_FEATURES` per row.

    Columns: [first candidate, last candidate, rank / (n - 1), posterior, is a posterior mode, share of reactants
    exhausted at this extent, log posterior ratio to the mode (floored at -10, / 10)]. ``cands`` and ``post``
    come from :func:`gnn_chemalgebra.algebra.extent.extent_posterior`.
    """
    n = len(cands)
    if n == 0:
        return []
    caps = [reactant_cap(groups[m], k) for m, k in nu.items() if k < 0 and m in groups]
    pmax = max(post) if post else 1.0
    rows = []
    for i, x in enumerate(cands):
        p = post[i] if post else 1.0 / n
        rows.append(
            [
                float(i == 0),
                float(i == n - 1),
                i / max(n - 1, 1),
                p,
                float(p >= pmax - 1e-12),
                sum(1 for c in caps if c == x) / max(len(caps), 1),
                max(math.log(max(p, 1e-30) / max(pmax, 1e-30)), -10.0) / 10.0,
            ]
        )
    return rows


class Featurizer:
    """Turns distinct molecules + totals into a :class:`BagData`; caches per-molecule graphs."""

    def __init__(self, repr: str) -> None:
        if repr not in ("smiles", "formula"):
            raise ValueError(f"unknown representation {repr!r}")
        self.repr = repr
        self._cache: dict[str, tuple[dict[str, torch.Tensor], torch.Tensor]] = {}
        self._shapes: dict[str, tuple[int, int]] = {}  # molecule -> (atoms, edges) of its cached graph

    @property
    def x_dim(self) -> int:
        return SMILES_X_DIM if self.repr == "smiles" else FORMULA_X_DIM

    @property
    def edge_dim(self) -> int:
        return SMILES_EDGE_DIM if self.repr == "smiles" else FORMULA_EDGE_DIM

    def settings(self) -> dict[str, Any]:
        return {
            "version": FEATURIZER_VERSION,
            "repr": self.repr,
            "x_dim": self.x_dim,
            "edge_dim": self.edge_dim,
            "n_elements": COMP_DIM,
            "comp_dim": COMP_DIM,
            "n_mult_features": N_MULT_FEATURES,
            "n_raw_coef": N_RAW_COEF,
            "role_nu": list(ROLE_NU),
            "h_index": ELEMENT_INDEX["H"],
            "charge_index": CHARGE_INDEX,
        }

    def molecule(self, mol: str) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        hit = self._cache.get(mol)
        if hit is None:
            g = shared_smiles_graph(mol) if self.repr == "smiles" else formula_graph(mol)
            hit = (g, comp_vector(composition(mol, self.repr)))
            self._cache[mol] = hit
        return hit

    def cache_molecules(self, mols: Iterable[str]) -> None:
        """Featurise the molecules of ``mols`` not cached yet; formulas in one pass (:func:`formula_features`)."""
        new = [m for m in dict.fromkeys(mols) if m not in self._cache]
        if self.repr == "formula" and new:
            self._cache.update(zip(new, formula_features(new), strict=True))
        elif self.repr == "smiles" and new:
            warm_smiles_graphs(new)
            try:
                comps = [composition(m, "smiles") for m in new]
                graphs = [shared_smiles_graph(m) for m in new]
            except ChemAlgebraError:  # one molecule by one: the same molecule raises as before
                for m in new:
                    self.molecule(m)
            else:
                for m, g, row in zip(new, graphs, comp_vectors(comps), strict=True):
                    self._cache[m] = (g, row)
        else:
            for m in new:
                self.molecule(m)

    def bag_fields(self, bags: Sequence[tuple[Sequence[str], Sequence[int], Sequence[int]]]) -> dict[str, Any]:
        """Several bags ``(mols, totals, nterms)`` collated in one go: every field equal to what
        :func:`.bagbatch.collate_bags` of :meth:`bag` of each gives, ``batch`` and ``ptr`` included; per-molecule
        tensors come from the cache and are concatenated once per field."""
        self.cache_molecules(m for mols, _, _ in bags for m in mols)
        cache = self._cache
        zs, xs, eis, eas, comps, sizes, n_edges = [], [], [], [], [], [], []
        mol_rows: list[list[float]] = []
        totals_all: list[int] = []
        mols_per_bag, nodes_per_bag = [], []
        shapes = self._shapes
        for mols, totals, nterms in bags:
            nodes = 0
            for m in mols:
                g, comp = cache[m]
                zs.append(g["z"])
                xs.append(g["x"])
                eis.append(g["edge_index"])
                eas.append(g["edge_attr"])
                comps.append(comp)
                shape = shapes.get(m)
                if shape is None:
                    shape = shapes[m] = (g["z"].numel(), g["edge_index"].size(1))
                sizes.append(shape[0])
                n_edges.append(shape[1])
                nodes += shape[0]
            totals = list(totals)
            mol_rows += _multiplicity_rows(totals, nterms)
            totals_all += totals
            mols_per_bag.append(len(mols))
            nodes_per_bag.append(nodes)
        size_t = torch.tensor(sizes, dtype=torch.long)
        starts = torch.cumsum(size_t, 0) - size_t  # first atom of each molecule in the batch
        edge_index = torch.cat(eis, dim=1) + torch.repeat_interleave(starts, torch.tensor(n_edges, dtype=torch.long))
        n_bags, n_mols = len(bags), len(sizes)
        mols_t, nodes_t = torch.tensor(mols_per_bag, dtype=torch.long), torch.tensor(nodes_per_bag, dtype=torch.long)
        coef = torch.tensor(totals_all, dtype=torch.long)
        return {
            "z": torch.cat(zs),
            "x": torch.cat(xs),
            "edge_index": edge_index,
            "edge_attr": torch.cat(eas),
            "atom2mol": torch.repeat_interleave(torch.arange(n_mols), size_t),
            "mol_graph": torch.repeat_interleave(torch.arange(n_bags), mols_t),
            "mol_feat": torch.tensor(mol_rows, dtype=torch.float),
            "mol_raw": _raw_coef_rows(coef),
            "mol_coef": coef,
            "mol_comp": torch.stack(comps),
            "num_mols": mols_t,
            "batch": torch.repeat_interleave(torch.arange(n_bags), nodes_t),
            "ptr": torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(nodes_t, 0)]),
        }

    def bag(self, mols: Sequence[str], totals: Sequence[int], nterms: Sequence[int]) -> BagData:
        """``mols`` distinct (in the caller's canonical order), with total coefficient and term count each."""
        from .bagdata import BagData

        zs, xs, eis, eas, a2m, comps = [], [], [], [], [], []
        offset = 0
        for i, m in enumerate(mols):
            g, comp = self.molecule(m)
            n = g["z"].numel()
            zs.append(g["z"])
            xs.append(g["x"])
            eis.append(g["edge_index"] + offset)
            eas.append(g["edge_attr"])
            a2m.append(torch.full((n,), i, dtype=torch.long))
            comps.append(comp)
            offset += n
        return BagData(
            z=torch.cat(zs),
            x=torch.cat(xs),
            edge_index=torch.cat(eis, dim=1),
            edge_attr=torch.cat(eas),
            atom2mol=torch.cat(a2m),
            mol_graph=torch.zeros(len(mols), dtype=torch.long),
            mol_feat=multiplicity_features(totals, nterms),
            mol_raw=raw_coef_features(totals),
            mol_coef=torch.tensor(list(totals), dtype=torch.long),
            mol_comp=torch.stack(comps),
            num_mols=len(mols),
            num_nodes=offset,
        )
