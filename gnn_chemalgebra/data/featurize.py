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
graph. Molecule graphs are cached by string, so the x5 draws of a base reaction share them.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import torch

from ..algebra.extent import reactant_cap
from ..algebra.roles import ROLE_NU
from ..chem.composition import CHARGE_KEY
from ..chem.formula import ELEMENTS
from ..chem.molecule import composition
from ..chem.smiles import shared_mol
from ..errors import ChemAlgebraError, ChemistryError

if TYPE_CHECKING:
    from .bagdata import BagData

FEATURIZER_VERSION = 1

# Index 0 = unknown element, 1 = the net-charge pseudo element; the same indices serve node types and
# composition columns.
ELEMENT_VOCAB: tuple[str, ...] = ("<unk>", CHARGE_KEY, *sorted(ELEMENTS))
ELEMENT_INDEX: dict[str, int] = {s: i for i, s in enumerate(ELEMENT_VOCAB)}
COMP_DIM = len(ELEMENT_VOCAB)
CHARGE_INDEX = ELEMENT_INDEX[CHARGE_KEY]

N_MULT_FEATURES = 6
N_RAW_COEF = 16  # one-hot of min(k, 15) + k/10 for the naive head
N_COEF_CLASSES = 16  # naive head: output coefficient 0..15
N_EXTENT_FEATURES = 7  # columns of extent_features

_HYB = ("SP", "SP2", "SP3", "SP3D", "SP3D2")
_BOND = ("SINGLE", "DOUBLE", "TRIPLE", "AROMATIC")
SMILES_X_DIM = 6 + 5 + 5 + 1 + 1 + (len(_HYB) + 1) + 1
SMILES_EDGE_DIM = len(_BOND) + 2
FORMULA_X_DIM = 4
FORMULA_EDGE_DIM = 1


def element_index(sym: str) -> int:
    return ELEMENT_INDEX.get(sym, 0)


def _onehot(v: int, n: int, offset: int = 0) -> list[float]:
    out = [0.0] * n
    i = min(max(v + offset, 0), n - 1)
    out[i] = 1.0
    return out


def comp_vector(comp: dict[str, int]) -> torch.Tensor:
    v = torch.zeros(COMP_DIM)
    for k, n in comp.items():
        v[element_index(k)] += float(n)
    return v


def comp_vectors(comps: Sequence[Mapping[str, int]]) -> list[torch.Tensor]:
    """:func:`comp_vector` of each composition, as the rows of one tensor filled at once (integer counts: the
    same float32 sums whatever the order)."""
    owner, cols, counts = [], [], []
    for r, comp in enumerate(comps):
        for k, n in comp.items():
            owner.append(r)
            cols.append(element_index(k))
            counts.append(float(n))
    rows = torch.zeros(len(comps), COMP_DIM)
    if counts:
        rows.index_put_((torch.tensor(owner), torch.tensor(cols)), torch.tensor(counts), accumulate=True)
    return list(rows.unbind(0))


_HYB_INDEX: dict[Any, int] = {}
_BOND_INDEX: dict[Any, int] = {}


def _hyb_index(hyb: Any) -> int:
    """Column of an RDKit hybridisation among ``_HYB`` (``len(_HYB)`` = other), memoised per enum value."""
    i = _HYB_INDEX.get(hyb)
    if i is None:
        name = str(hyb)
        i = _HYB_INDEX[hyb] = _HYB.index(name) if name in _HYB else len(_HYB)
    return i


def _bond_index(bt: Any) -> int:
    """Column of an RDKit bond type among ``_BOND`` (other types -> 0, as single), memoised per enum value."""
    i = _BOND_INDEX.get(bt)
    if i is None:
        name = str(bt)
        i = _BOND_INDEX[bt] = _BOND.index(name) if name in _BOND else 0
    return i


def smiles_graph(smiles: str) -> dict[str, torch.Tensor]:
    """Atom graph of a SMILES: one-hot atom features (degree, formal charge, total H, aromatic, in ring,
    hybridisation, radical) and bond features (type, conjugated, in ring), every bond in both directions.

    The RDKit values are read once per atom/bond into integer rows; the one-hot columns are then set by
    tensor indexing (values and layout equal to concatenating :func:`_onehot` lists per atom). Reads the
    shared parse (:func:`~..chem.smiles.shared_mol`; nothing here changes it)."""
    return smiles_graphs([smiles])[0]


_GRAPH_KEYS = ("z", "x", "edge_index", "edge_attr")


def smiles_graphs(smiles: Sequence[str]) -> list[dict[str, torch.Tensor]]:
    """:func:`smiles_graph` of several molecules: the RDKit values of all of them are read first, the one-hot
    columns of every atom and bond are set in one pass over the concatenated rows, and each molecule then gets
    its own copy of its rows (the same element-wise writes per row as one molecule alone, so equal tensors)."""
    z: list[int] = []
    rows: list[tuple[int, ...]] = []
    bonds: list[tuple[int, ...]] = []
    n_atoms: list[int] = []
    n_bonds: list[int] = []
    for s in smiles:
        mol = shared_mol(s)
        for g in range(mol.GetNumAtoms()):  # by index: RDKit's Python atom/bond iterators cost more than the reads
            a = mol.GetAtomWithIdx(g)
            z.append(element_index(a.GetSymbol()))
            rows.append(
                (
                    a.GetDegree(),
                    a.GetFormalCharge(),
                    a.GetTotalNumHs(),
                    a.GetIsAromatic(),
                    a.IsInRing(),
                    _hyb_index(a.GetHybridization()),
                    a.GetNumRadicalElectrons() > 0,
                )
            )
        n_atoms.append(mol.GetNumAtoms())
        bonds += [
            (b.GetBeginAtomIdx(), b.GetEndAtomIdx(), _bond_index(b.GetBondType()), b.GetIsConjugated(), b.IsInRing())
            for b in map(mol.GetBondWithIdx, range(mol.GetNumBonds()))
        ]
        n_bonds.append(mol.GetNumBonds())
    n = len(rows)
    t = torch.tensor(rows, dtype=torch.long).view(n, 7)
    x = torch.zeros(n, SMILES_X_DIM)
    ar = torch.arange(n)
    x[ar, t[:, 0].clamp(0, 5)] = 1.0
    x[ar, 6 + (t[:, 1] + 2).clamp(0, 4)] = 1.0
    x[ar, 11 + t[:, 2].clamp(0, 4)] = 1.0
    x[:, 16] = t[:, 3].float()
    x[:, 17] = t[:, 4].float()
    x[ar, 18 + t[:, 5]] = 1.0
    x[:, 24] = t[:, 6].float()
    m = len(bonds)
    bt = torch.tensor(bonds, dtype=torch.long).view(m, 5)
    src = torch.stack([bt[:, 0], bt[:, 1]], dim=1).reshape(-1)
    dst = torch.stack([bt[:, 1], bt[:, 0]], dim=1).reshape(-1)
    ea = torch.zeros(m, SMILES_EDGE_DIM)
    ea[torch.arange(m), bt[:, 2]] = 1.0
    ea[:, 4] = bt[:, 3].float()
    ea[:, 5] = bt[:, 4].float()
    edges = [2 * k for k in n_bonds]
    parts = zip(
        torch.tensor(z, dtype=torch.long).split(n_atoms),
        x.split(n_atoms),
        torch.stack([src, dst]).split(edges, dim=1),
        ea.repeat_interleave(2, dim=0).split(edges),
        strict=True,
    )
    return [
        {k: v.clone(memory_format=torch.contiguous_format) for k, v in zip(_GRAPH_KEYS, part, strict=True)}
        for part in parts
    ]


_GRAPHS: OrderedDict[str, dict[str, torch.Tensor]] = OrderedDict()  # least recently used first
SHARED_GRAPHS = 8192  # molecules kept by the shared atom-graph cache


def _keep_graph(smiles: str, graph: dict[str, torch.Tensor]) -> None:
    _GRAPHS[smiles] = graph
    if len(_GRAPHS) > SHARED_GRAPHS:
        _GRAPHS.popitem(last=False)


def shared_smiles_graph(smiles: str) -> dict[str, torch.Tensor]:
    """:func:`smiles_graph`, computed once per SMILES for every caller in the process (the GNN featuriser and
    the edit model's :class:`~.edit_dataset.GraphCache` read the same molecules of a line). Returns the same
    tensors each time (read-only by contract, like every per-molecule cache here) in a fresh dict."""
    hit = _GRAPHS.get(smiles)
    if hit is None:
        hit = smiles_graph(smiles)
        _keep_graph(smiles, hit)
    else:
        _GRAPHS.move_to_end(smiles)
    return dict(hit)


def warm_smiles_graphs(smiles: Iterable[str]) -> None:
    """Put the atom graphs of the molecules of ``smiles`` not cached yet into :func:`shared_smiles_graph`'s cache,
    built in one pass (:func:`smiles_graphs`). Strings the strict reader refuses are left out: asking for one
    later raises as before."""
    todo = []
    for s in dict.fromkeys(smiles):
        if s in _GRAPHS:
            continue
        try:
            shared_mol(s)
        except ChemistryError:
            continue
        todo.append(s)
    for s, g in zip(todo, smiles_graphs(todo) if todo else [], strict=True):
        _keep_graph(s, g)


def formula_graph(formula: str) -> dict[str, torch.Tensor]:
    """One node per element (and one for a net charge), fully connected inside the molecule."""
    comp = composition(formula, "formula")
    keys = list(comp.keys())
    z = torch.tensor([element_index(k) for k in keys], dtype=torch.long)
    cnt = torch.tensor([float(comp[k]) for k in keys])
    x = torch.stack(
        [torch.log1p(cnt.abs()), torch.sign(cnt), (cnt.abs() == 1).float(), cnt.abs() / cnt.abs().sum()],
        dim=1,
    )
    n = len(keys)
    idx = torch.arange(n)
    ii, jj = torch.meshgrid(idx, idx, indexing="ij")
    keep = ii != jj
    ei = torch.stack([ii[keep], jj[keep]])
    return {"z": z, "x": x, "edge_index": ei, "edge_attr": torch.ones(ei.size(1), FORMULA_EDGE_DIM)}


_EDGES: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}


def _complete_edges(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``edge_index`` and ``edge_attr`` of the complete graph on ``n`` nodes, as :func:`formula_graph` builds them
    (shared per ``n``: nothing writes into them)."""
    hit = _EDGES.get(n)
    if hit is None:
        idx = torch.arange(n)
        ii, jj = torch.meshgrid(idx, idx, indexing="ij")
        keep = ii != jj
        ei = torch.stack([ii[keep], jj[keep]])
        hit = _EDGES[n] = (ei, torch.ones(ei.size(1), FORMULA_EDGE_DIM))
    return hit


def formula_features(formulas: Sequence[str]) -> list[tuple[dict[str, torch.Tensor], torch.Tensor]]:
    """``(formula_graph(f), comp_vector(composition(f)))`` for every formula, computed in one pass over all of
    them (the same element-wise operations on the concatenated counts; ``tests/data/test_featurize_batch.py``
    checks equality with the per-molecule functions)."""
    comps = [composition(f, "formula") for f in formulas]
    keys = [list(c) for c in comps]
    sizes = [len(k) for k in keys]
    z = torch.tensor([element_index(k) for ks in keys for k in ks], dtype=torch.long)
    cnt = torch.tensor([float(c[k]) for c, ks in zip(comps, keys, strict=True) for k in ks], dtype=torch.float)
    owner = torch.repeat_interleave(torch.arange(len(formulas)), torch.tensor(sizes, dtype=torch.long))
    a = cnt.abs()
    total = torch.zeros(len(formulas)).index_add_(0, owner, a)  # integer sums: exact, as cnt.abs().sum()
    x = torch.stack([torch.log1p(a), torch.sign(cnt), (a == 1).float(), a / total[owner]], dim=1)
    comp_rows = torch.zeros(len(formulas), COMP_DIM).index_put_((owner, z), cnt, accumulate=True)
    out = []
    start = 0
    for i, n in enumerate(sizes):
        ei, ea = _complete_edges(n)
        g = {"z": z[start : start + n], "x": x[start : start + n], "edge_index": ei, "edge_attr": ea}
        out.append((g, comp_rows[i]))
        start += n
    return out


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
    rows = [_onehot(min(k, N_RAW_COEF - 1), N_RAW_COEF - 1) + [k / 10.0] for k in totals]
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
