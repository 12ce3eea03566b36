"""Per-molecule featurisation: the element vocabulary, composition vectors, RDKit atom graphs (SMILES) and
element graphs (formulas), each cached per molecule string; :mod:`.featurize` puts a bag's molecules together.

What a node may carry is fixed by the contract in :mod:`.featurize`: atom or element identity and
within-molecule counts, never a coefficient.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import torch

from ..chem.composition import CHARGE_KEY
from ..chem.formula import ELEMENTS
from ..chem.molecule import composition
from ..chem.smiles import shared_mol
from ..errors import ChemistryError

# Index 0 = unknown element, 1 = the net-charge pseudo element; the same indices serve node types and
# composition columns.
ELEMENT_VOCAB: tuple[str, ...] = ("<unk>", CHARGE_KEY, *sorted(ELEMENTS))
ELEMENT_INDEX: dict[str, int] = {s: i for i, s in enumerate(ELEMENT_VOCAB)}
COMP_DIM = len(ELEMENT_VOCAB)
CHARGE_INDEX = ELEMENT_INDEX[CHARGE_KEY]

_HYB = ("SP", "SP2", "SP3", "SP3D", "SP3D2")
_BOND = ("SINGLE", "DOUBLE", "TRIPLE", "AROMATIC")
SMILES_X_DIM = 6 + 5 + 5 + 1 + 1 + (len(_HYB) + 1) + 1
SMILES_EDGE_DIM = len(_BOND) + 2
FORMULA_X_DIM = 4
FORMULA_EDGE_DIM = 1


def element_index(sym: str) -> int:
    return ELEMENT_INDEX.get(sym, 0)


def onehot(v: int, n: int, offset: int = 0) -> list[float]:
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
    tensor indexing (values and layout equal to concatenating :func:`onehot` lists per atom). Reads the
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
