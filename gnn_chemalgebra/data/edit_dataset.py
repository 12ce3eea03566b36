"""PyG examples for the bond-edit (WLDN/rexgen-style) product-graph predictor, one per base reaction.

Graph: the disjoint union of the reactant molecules' atom graphs, in the given reactant order (so node ``g`` of
the reactant part is the global atom index of :mod:`gnn_chemalgebra.chem.edits`), followed by the reagent
molecules' atoms flagged ``is_reagent`` (context for the attention; never edited, never paired).

Candidate pairs (``pair_index``, ``i < j``, reactant atoms only): every pair when the reactant side has at most
``max_pairs`` of them (all USPTO-BAL reactions do; the largest has 68 reactant atoms), else every existing bond,
every gold-changed pair and a seeded sample of the other non-bonded pairs. ``pair_cur`` is the bond class in
the reactants, ``pair_dist`` the topological distance class (1..6, 7 = further, 8 = different molecules).

Labels (from :func:`gnn_chemalgebra.chem.edits.labels_for_record`):

* ``pair_y``: the product bond class (none, single, double, triple, aromatic) of each candidate pair;
* ``h_y``: the *valence residual* of the hydrogen change, ``dH + dV`` with ``dV`` the change of the atom's
  bond-order sum (aromatic = 1.5), doubled and shifted to a class. Forming a bond costs a hydrogen and
  breaking one gives it back, so the residual is 0 for almost every atom; predicting it instead of ``dH``
  keeps the hydrogens consistent with whichever bond edits the decoder's beam chooses
  (``dH = residual - dV``, see :func:`h_delta_from_residual`);
* ``q_y``: the formal-charge change, shifted to a class;
* ``prod_y``: whether the atom ends up in a gold (non-leftover) product; the decoder keeps the edited
  components whose atoms vote "product".

Reagent atoms carry ``-100`` (ignored) in every atom label.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import torch
from rdkit import Chem
from torch_geometric.data import Data

from ..chem.edits import BOND_CLASSES, NONE, EditLabelError, EditLabels, bond_class, labels_for_record
from ..chem.smiles import shared_mol
from ..errors import ChemistryError
from ..io import read_jsonl
from .featurize import shared_smiles_graph

N_BOND_CLASSES = len(BOND_CLASSES)
BOND_VALENCE: tuple[float, ...] = (0.0, 1.0, 2.0, 3.0, 1.5)
H_RES_MAX2 = 6  # doubled residual clipped to [-6, 6]
N_H_CLASSES = 2 * H_RES_MAX2 + 1
H_ZERO = H_RES_MAX2
Q_MAX = 2
N_Q_CLASSES = 2 * Q_MAX + 1
Q_ZERO = Q_MAX
N_DIST = 9  # 0 unused (i < j always), 1..6 topological distance, 7 further, 8 different molecules
DIST_FAR, DIST_OTHER_MOL = 7, 8
IGNORE = -100
EDIT_FEATURIZER_VERSION = 1


class EditData(Data):
    """One base reaction; ``pair_index`` (auto-incremented, name contains 'index') and ``atom2mol`` batch."""

    def __inc__(self, key: str, value: Any, *args: Any, **kwargs: Any) -> Any:
        if key == "atom2mol":
            return int(self.num_mols)
        return super().__inc__(key, value, *args, **kwargs)


class GraphCache:
    """Per-molecule atom graphs and distance matrices, cached by SMILES (molecules repeat across reactions)."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[dict[str, torch.Tensor], torch.Tensor, torch.Tensor]] = {}

    def get(self, smiles: str) -> tuple[dict[str, torch.Tensor], torch.Tensor, torch.Tensor]:
        """``(smiles_graph, distance matrix, bond classes as a flat n*n long tensor)``."""
        hit = self._cache.get(smiles)
        if hit is None:
            try:  # the line's shared parse (only read here) when the strict reader accepts the string
                mol = shared_mol(smiles)
            except ChemistryError:
                mol = Chem.MolFromSmiles(smiles)
            if mol is None:
                raise EditLabelError("unparsable_mapped_smiles", smiles)
            n = mol.GetNumAtoms()
            cls = torch.full((n * n,), NONE, dtype=torch.long)
            bonds = [(b.GetBeginAtomIdx(), b.GetEndAtomIdx(), bond_class(b)) for b in mol.GetBonds()]
            i, j, c = torch.tensor(bonds, dtype=torch.long).view(-1, 3).unbind(1)
            if bonds:
                cls[i * n + j] = c
                cls[j * n + i] = c
            if n <= EXACT_DISTANCE_ATOMS:
                dist = torch.as_tensor(Chem.GetDistanceMatrix(mol), dtype=torch.float).view(n, n)
            else:
                dist = capped_distances(n, i, j)
            hit = (shared_smiles_graph(smiles), dist, cls)
            self._cache[smiles] = hit
        return hit


# Molecules up to this size get RDKit's full distance matrix (Floyd-Warshall, n^3: 1e6 steps at 100 atoms, 8e9 and
# 22 s at 2,000); larger ones the distances up to the last distance class only (:func:`capped_distances`).
EXACT_DISTANCE_ATOMS = 100


def capped_distances(n: int, i: torch.Tensor, j: torch.Tensor, cap: int = DIST_FAR - 1) -> torch.Tensor:
    """Topological distances of an ``n``-atom graph with bonds ``(i, j)``, exact up to ``cap`` bonds and
    ``cap + 1`` beyond (unreachable atoms included), as an ``[n, n]`` float tensor: every distance class
    (1..``cap`` exact, further) equals the one read off RDKit's full matrix. A breadth-first search of depth
    ``cap`` from each atom: work in proportion to the atoms within ``cap`` bonds, not ``n^3``."""
    adj: list[list[int]] = [[] for _ in range(n)]
    for a, b in zip(i.tolist(), j.tolist(), strict=True):
        adj[a].append(b)
        adj[b].append(a)
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    for start in range(n):
        seen, frontier = {start}, [start]
        for d in range(1, cap + 1):
            nxt = []
            for a in frontier:
                for b in adj[a]:
                    if b not in seen:
                        seen.add(b)
                        nxt.append(b)
            if not nxt:
                break
            rows += [start] * len(nxt)
            cols += nxt
            vals += [float(d)] * len(nxt)
            frontier = nxt
    dist = torch.full((n, n), float(cap + 1))
    dist.fill_diagonal_(0.0)
    if rows:
        dist[torch.tensor(rows), torch.tensor(cols)] = torch.tensor(vals)
    return dist


def reaction_graph(
    reactants: Sequence[str],
    reagents: Sequence[str],
    cache: GraphCache | None = None,
    *,
    keep_pairs: Iterable[tuple[int, int]] = (),
    max_pairs: int = 0,
    seed: int = 0,
) -> EditData:
    """Features and candidate pairs of one reaction (no labels). ``max_pairs`` 0 = every reactant pair."""
    cache = cache or GraphCache()
    zs, xs, eis, eas, a2m, flags = [], [], [], [], [], []
    mol_of: list[int] = []
    local: list[int] = []
    dists, classes, sizes = [], [], []
    offset = 0
    n_react = 0
    for k, smi in enumerate([*reactants, *reagents]):
        g, dist, cls = cache.get(smi)
        n = int(g["z"].numel())
        zs.append(g["z"])
        xs.append(g["x"])
        eis.append(g["edge_index"] + offset)
        eas.append(g["edge_attr"])
        a2m.append(torch.full((n,), k, dtype=torch.long))
        is_reagent = k >= len(reactants)
        flags.append(torch.full((n,), float(is_reagent)))
        if not is_reagent:
            mol_of += [len(sizes)] * n
            local += list(range(n))
            dists.append(dist)
            classes.append(cls)
            sizes.append(n)
            n_react += n
        offset += n
    ii, jj = torch.triu_indices(n_react, n_react, offset=1)
    if max_pairs and ii.numel() > max_pairs:
        ii, jj = _subsample_pairs(ii, jj, mol_of, local, classes, sizes, set(keep_pairs), max_pairs, seed)
    cur, dcls = _pair_attrs(ii, jj, mol_of, local, dists, classes, sizes)
    return EditData(
        z=torch.cat(zs),
        x=torch.cat([torch.cat(xs), torch.cat(flags).unsqueeze(1)], dim=1),
        edge_index=torch.cat(eis, dim=1),
        edge_attr=torch.cat(eas),
        atom2mol=torch.cat(a2m),
        is_reagent=torch.cat(flags).bool(),
        n_react=n_react,
        num_mols=len(reactants) + len(reagents),
        pair_index=torch.stack([ii, jj]).long(),
        pair_cur=cur,
        pair_dist=dcls,
        num_nodes=offset,
    )


def _pair_attrs(
    ii: torch.Tensor,
    jj: torch.Tensor,
    mol_of: list[int],
    local: list[int],
    dists: list[torch.Tensor],
    classes: list[torch.Tensor],
    sizes: list[int],
) -> tuple[torch.Tensor, torch.Tensor]:
    """Current bond class and distance class of every candidate pair, by table look-up over the pairs at once
    (pairs grow with the square of the reactant atoms): the molecules' n*n tables are laid end to end, and
    a pair inside molecule ``m`` reads entry ``start[m] + a * n + b``; pairs across molecules get
    ``NONE`` / ``DIST_OTHER_MOL``."""
    if ii.numel() == 0:
        return torch.zeros(0, dtype=torch.long), torch.zeros(0, dtype=torch.long)
    mol = torch.tensor(mol_of, dtype=torch.long)
    loc = torch.tensor(local, dtype=torch.long)
    size = torch.tensor(sizes, dtype=torch.long)
    start = torch.cumsum(size * size, 0) - size * size
    cls_flat = torch.cat(classes)
    d = torch.cat([x.reshape(-1) for x in dists])
    dist_flat = torch.where((d >= 1) & (d <= 6), d, torch.full_like(d, DIST_FAR)).long()
    mi, mj = mol[ii], mol[jj]
    same = mi == mj
    flat = start[mi] + loc[ii] * size[mi] + loc[jj]
    flat = torch.where(same, flat, torch.zeros_like(flat))
    cur = torch.where(same, cls_flat[flat], torch.full_like(flat, NONE))
    dcls = torch.where(same, dist_flat[flat], torch.full_like(flat, DIST_OTHER_MOL))
    return cur, dcls


def _subsample_pairs(
    ii: torch.Tensor,
    jj: torch.Tensor,
    mol_of: list[int],
    local: list[int],
    classes: list[torch.Tensor],
    sizes: list[int],
    keep: set[tuple[int, int]],
    max_pairs: int,
    seed: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Existing bonds + ``keep`` (the gold changes) + a seeded sample of the rest, ``max_pairs`` in all."""
    must, rest = [], []
    cls = [c.tolist() for c in classes]
    for i, j in zip(ii.tolist(), jj.tolist(), strict=True):
        m = mol_of[i]
        bonded = m == mol_of[j] and cls[m][local[i] * sizes[m] + local[j]] != NONE
        (must if bonded or (i, j) in keep else rest).append((i, j))
    rng = random.Random(seed)
    rest = rng.sample(rest, max(0, min(len(rest), max_pairs - len(must))))
    pairs = sorted(must + rest)
    t = torch.tensor(pairs, dtype=torch.long).view(-1, 2)
    return t[:, 0], t[:, 1]


def valence_change(labels: EditLabels, cur_class: dict[tuple[int, int], int]) -> dict[int, float]:
    """Per atom, the change of its bond-order sum (aromatic = 1.5) caused by ``labels.bonds``."""
    dv: dict[int, float] = {}
    for i, j, c in labels.bonds:
        delta = BOND_VALENCE[c] - BOND_VALENCE[cur_class.get((i, j), NONE)]
        dv[i] = dv.get(i, 0.0) + delta
        dv[j] = dv.get(j, 0.0) + delta
    return dv


def h_residual_class(dh: int, dv: float) -> int:
    """Class of the doubled valence residual ``2 * (dH + dV)``, clipped."""
    r2 = int(round(2 * (dh + dv)))
    return max(-H_RES_MAX2, min(H_RES_MAX2, r2)) + H_ZERO


def h_delta_from_residual(h_class: int, dv: float) -> int | None:
    """Inverse of :func:`h_residual_class`: ``dH`` for a predicted residual and chosen bond edits, or ``None``
    when they disagree on half-integers (an aromatic bond edit without its partner)."""
    x = (h_class - H_ZERO) / 2.0 - dv
    if abs(x - round(x)) > 1e-6:
        return None
    return int(round(x))


def add_labels(data: EditData, labels: EditLabels) -> EditData:
    """Attach the dense gold labels of ``labels`` to a graph from :func:`reaction_graph`."""
    n, n_react = int(data.num_nodes), int(data.n_react)
    if sum(labels.n_atoms) != n_react:
        raise EditLabelError("canonical_atom_order_mismatch", "graph and labels disagree on the atom count")
    pi, pj = data.pair_index
    # position of pair (i, j) in the candidate list, through a dense n_react x n_react table (-1: not a pair)
    pos_of = torch.full((n_react * n_react,), -1, dtype=torch.long)
    pos_of[pi * n_react + pj] = torch.arange(pi.numel())
    y = data.pair_cur.clone()
    cur_class: dict[tuple[int, int], int] = {}
    for i, j, c in labels.bonds:
        k = int(pos_of[i * n_react + j]) if 0 <= i < n_react and 0 <= j < n_react else -1
        if k < 0:
            raise EditLabelError("other_mismatch", f"changed pair {(i, j)} not a candidate")
        cur_class[(i, j)] = int(data.pair_cur[k])
        y[k] = c
    dv = valence_change(labels, cur_class)
    pad = [IGNORE] * (n - n_react)  # reagent atoms
    prod = set(labels.product_atoms)
    h_y = [h_residual_class(labels.h_delta.get(g, 0), dv.get(g, 0.0)) for g in range(n_react)]
    q_y = [max(-Q_MAX, min(Q_MAX, labels.charge_delta.get(g, 0))) + Q_ZERO for g in range(n_react)]
    prod_y = [int(g in prod) for g in range(n_react)]
    h_y, q_y, prod_y = (torch.tensor(v + pad, dtype=torch.long) for v in (h_y, q_y, prod_y))
    data.pair_y = y
    data.h_y, data.q_y, data.prod_y = h_y, q_y, prod_y
    return data


def record_example(
    record: dict[str, Any], cache: GraphCache | None = None, *, max_pairs: int = 0, shuffle_seed: int | None = None
) -> EditData:
    """Labelled example of one ``reactions-*.jsonl`` record. Raises :class:`EditLabelError` on mapping quirks.

    ``shuffle_seed``: None keeps the record's reactant order (the labels' global indexing); the model is
    permutation-equivariant, so an order does not change what it learns.
    """
    labels = labels_for_record(record)
    keep = [(i, j) for i, j, _ in labels.bonds]
    data = reaction_graph(
        record["reactants"], record.get("reagents", []), cache, keep_pairs=keep, max_pairs=max_pairs,
        seed=int(record.get("id", 0)) if shuffle_seed is None else shuffle_seed,
    )  # fmt: skip
    return add_labels(data, labels)


class SizeBucketBatchSampler:
    """Batches of reactions of similar atom counts, for a padded Transformer over each reaction's atoms.

    Each pass: a seeded permutation of every index, cut into pools of ``pool`` batches; each pool is sorted by
    size (stable) and cut into batches of ``batch_size``; the batches of all pools are then shuffled. Every index
    appears once per pass, the batches are as many as without bucketing (only the last pool has a short batch),
    and the order depends only on the ``generator``'s state (which the trainer saves and restores on resume).
    """

    def __init__(self, sizes: Sequence[int], batch_size: int, generator: torch.Generator, pool: int = 50) -> None:
        self.sizes = list(sizes)
        self.batch_size = int(batch_size)
        self.generator = generator
        self.span = self.batch_size * max(int(pool), 1)

    def __len__(self) -> int:
        return -(-len(self.sizes) // self.batch_size)

    def __iter__(self) -> Iterator[list[int]]:
        perm = torch.randperm(len(self.sizes), generator=self.generator).tolist()
        batches: list[list[int]] = []
        for start in range(0, len(perm), self.span):
            chunk = sorted(perm[start : start + self.span], key=self.sizes.__getitem__)
            batches += [chunk[k : k + self.batch_size] for k in range(0, len(chunk), self.batch_size)]
        for b in torch.randperm(len(batches), generator=self.generator).tolist():
            yield batches[b]


def load_records(path: str | Path, limit: int | None = None) -> list[dict[str, Any]]:
    """Records of a ``reactions-<split>.jsonl`` file (first ``limit`` if given and > 0)."""
    return read_jsonl(path, limit)


LOCAL_SOURCE = "local"


def record_source(record: dict[str, Any]) -> str:
    """Where a record comes from: ``local`` (a USPTO-MIT reaction of the benchmark's own USPTO-BAL) or the
    ``source.set`` of an extra training reaction (``uspto_full``: atom-mapped; ``uspto_500_mt``: not mapped)."""
    src = record.get("source")
    return str(src["set"]) if isinstance(src, dict) and src.get("set") else LOCAL_SOURCE


def build_examples(
    records: Sequence[dict[str, Any]],
    *,
    max_pairs: int = 0,
    cache: GraphCache | None = None,
    by_source: dict[str, dict[str, Any]] | None = None,
) -> tuple[list[EditData], list[int], dict[str, int]]:
    """Labelled examples of the records that yield labels; returns ``(examples, kept record indices, skipped
    causes)``. ``by_source``: filled with ``{source: {"read", "used", "skipped": {cause: n}}}``."""
    cache = cache or GraphCache()
    out, kept, skipped = [], [], {}
    for k, rec in enumerate(records):
        row = None
        if by_source is not None:
            row = by_source.setdefault(record_source(rec), {"read": 0, "used": 0, "skipped": {}})
            row["read"] += 1
        try:
            out.append(record_example(rec, cache, max_pairs=max_pairs))
        except EditLabelError as err:
            skipped[err.cause] = skipped.get(err.cause, 0) + 1
            if row is not None:
                row["skipped"][err.cause] = row["skipped"].get(err.cause, 0) + 1
            continue
        kept.append(k)
        if row is not None:
            row["used"] += 1
    return out, kept, skipped
