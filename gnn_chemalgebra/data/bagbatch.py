"""Batches of bags: the project's one batching path (training, validation and prediction; PyG's ``Batch`` is not
used for bags, experiments/performance.md "Batching paths" gives the measurements).

A batch concatenates the fields of its bags (:class:`~.bagdata.BagData`, or any mapping with the same fields) and
shifts the index fields by what comes before each bag: ``edge_index`` by its atoms, ``atom2mol`` by its
molecules, ``mol_graph``/``ext_graph`` by its bags; a field with one value per bag (a number, a 0-d tensor) is
stacked; ``batch`` (atom -> bag) and ``ptr`` (first atom of each bag) are added. So inside a batch every bond,
atom -> molecule and molecule -> bag index stays inside its bag (``tests/data/test_bagbatch.py``).

:class:`PackedBags` concatenates every field of a training set once; a batch is then one gather index per group of
fields that share their per-bag lengths (atoms, edges, molecules, extent candidates, one row per bag), taken with
``index_select``, plus the shifts. :func:`collate_bags` is the same for a list of bags (packed, then all taken).
The predictor builds its batches straight from the featuriser's molecule cache
(:meth:`~.featurize.Featurizer.bag_fields`, equal field for field: ``tests/data/test_featurize_batch.py``).

Imports torch only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

# field -> what is added to each bag's values: the atoms ("nodes"), molecules or bags before it
_SHIFT_BY: dict[str, str] = {"edge_index": "nodes", "atom2mol": "mols", "mol_graph": "bags", "ext_graph": "bags"}
_LAST_DIM = frozenset({"edge_index"})  # concatenated along the last dimension ([2, edges])


class BagBatch:
    """Collated bags: each field as an attribute, ``num_graphs`` (bags), ``num_nodes`` (atoms), ``batch``."""

    def __init__(self, fields: dict[str, Any], num_graphs: int, num_nodes: int) -> None:
        self._fields = fields
        self.num_graphs = num_graphs
        self.num_nodes = num_nodes

    def __getattr__(self, name: str) -> Any:
        fields = self.__dict__.get("_fields", {})
        if name in fields:
            return fields[name]
        raise AttributeError(name)

    def keys(self) -> list[str]:
        return list(self._fields)

    def to(self, device: torch.device | str) -> BagBatch:
        moved = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in self._fields.items()}
        return BagBatch(moved, self.num_graphs, self.num_nodes)


def _exclusive_cumsum(t: torch.Tensor) -> torch.Tensor:
    return torch.cumsum(t, 0) - t


class PackedBags:
    """Every field of ``bags`` (mappings with the same fields, ``num_nodes`` and ``num_mols`` among them)
    concatenated once; :meth:`batch` takes any bags of them, in any order."""

    def __init__(self, bags: Sequence[Mapping[str, Any]]) -> None:
        if not bags:
            raise ValueError("PackedBags: no bags")
        self.n = len(bags)
        self.keys = [k for k in bags[0] if k != "num_nodes"]
        self.nodes = torch.tensor([int(b["num_nodes"]) for b in bags], dtype=torch.long)
        self._shift = {"nodes": self.nodes, "mols": torch.tensor([int(b["num_mols"]) for b in bags]),
                       "bags": torch.ones(self.n, dtype=torch.long)}  # fmt: skip
        self._flat: dict[str, torch.Tensor] = {}
        self._dim: dict[str, int] = {}
        self._group: dict[str, int] = {}
        lengths: list[torch.Tensor] = []  # one per distinct length vector (fields of a group share it)
        for key in self.keys:
            values = [b[key] for b in bags]
            elem = values[0]
            if isinstance(elem, torch.Tensor) and elem.dim() > 0:
                dim = -1 if key in _LAST_DIM else 0
                self._flat[key] = torch.cat(values, dim=dim)
                self._dim[key] = dim
                lens = torch.tensor([v.size(dim) for v in values], dtype=torch.long)
            elif isinstance(elem, (torch.Tensor, int, float)):  # one value per bag: stacked
                self._flat[key] = torch.stack(values) if isinstance(elem, torch.Tensor) else torch.tensor(values)
                self._dim[key] = 0
                lens = torch.ones(self.n, dtype=torch.long)
            else:
                raise TypeError(f"PackedBags: field {key!r} of type {type(elem).__name__} is not a tensor or number")
            for g, other in enumerate(lengths):
                if torch.equal(other, lens):
                    self._group[key] = g
                    break
            else:
                self._group[key] = len(lengths)
                lengths.append(lens)
        self._lens = lengths
        self._starts = [_exclusive_cumsum(lens) for lens in lengths]

    def __len__(self) -> int:
        return self.n

    def batch(self, indices: Sequence[int] | torch.Tensor) -> BagBatch:
        """The bags ``indices`` (in that order; one may repeat) as one batch."""
        ids = torch.as_tensor(indices, dtype=torch.long)
        if ids.numel() == 0:
            raise ValueError("PackedBags.batch: no bags")
        gathers, reps = [], []
        for lens_all, starts_all in zip(self._lens, self._starts, strict=True):
            lens = lens_all[ids]
            total = int(lens.sum())
            # position j of the batch's run for this group comes from starts[bag] + (j - first j of that bag)
            offset = starts_all[ids] - _exclusive_cumsum(lens)
            gathers.append(torch.arange(total) + torch.repeat_interleave(offset, lens, output_size=total))
            reps.append((lens, total))
        shifts = {k: _exclusive_cumsum(v[ids]) for k, v in self._shift.items()}
        out: dict[str, Any] = {}
        for key in self.keys:
            g = self._group[key]
            value = self._flat[key].index_select(self._dim[key], gathers[g])
            by = _SHIFT_BY.get(key)
            if by is not None:
                lens, total = reps[g]
                value = value + torch.repeat_interleave(shifts[by], lens, output_size=total)
            out[key] = value
        nodes = self.nodes[ids]
        n_nodes = int(nodes.sum())
        out["batch"] = torch.repeat_interleave(torch.arange(ids.numel()), nodes, output_size=n_nodes)
        out["ptr"] = torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(nodes, 0)])
        return BagBatch(out, int(ids.numel()), n_nodes)


def collate_bags(bags: Sequence[Mapping[str, Any]]) -> BagBatch:
    """One batch of ``bags`` in their order (bags built on access, validation, a dataset's bags at prediction)."""
    if not bags:
        raise ValueError("collate_bags: no bags")
    return PackedBags(bags).batch(torch.arange(len(bags)))
