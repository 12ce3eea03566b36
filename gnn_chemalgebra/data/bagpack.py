"""All bags of a training set packed once into flat tensors, so a batch is a few index gathers.

:func:`~.bagbatch.collate_bags` (and PyG's ``Batch.from_data_list``) concatenate a list of per-bag tensors field
by field for every batch: about twenty ``torch.cat`` calls and Python loops over the bags, a noticeable share of
a training step at batch 64. :class:`PackedBags` concatenates every field of every bag once; :meth:`PackedBags.batch`
then builds one gather index per group of fields that share their per-bag lengths (atoms, edges, molecules,
extent candidates, one row per bag) and takes each field with ``index_select``, adding the same per-bag shifts
PyG adds (``edge_index`` by the atoms before the bag, ``atom2mol`` by the molecules, ``mol_graph``/``ext_graph``
by the bags). The result holds, key for key, the tensors ``Batch.from_data_list`` gives for the same bags in the
same order (``tests/data/test_bagpack.py``).

Imports torch only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from .bagbatch import _LAST_DIM, _SHIFT_BY, BagBatch, _as_fields


def _exclusive_cumsum(t: torch.Tensor) -> torch.Tensor:
    return torch.cumsum(t, 0) - t


class PackedBags:
    """Every field of ``bags`` (``BagData`` or ``BagFields`` with the same fields) concatenated once."""

    def __init__(self, bags: Sequence[Any]) -> None:
        if not bags:
            raise ValueError("PackedBags: no bags")
        items = [_as_fields(b) for b in bags]
        self.n = len(items)
        self.keys = [k for k in items[0] if k != "num_nodes"]
        self.nodes = torch.tensor([int(it["num_nodes"]) for it in items], dtype=torch.long)
        self._shift = {"nodes": self.nodes, "mols": torch.tensor([int(it["num_mols"]) for it in items]),
                       "bags": torch.ones(self.n, dtype=torch.long)}  # fmt: skip
        self._flat: dict[str, torch.Tensor] = {}
        self._dim: dict[str, int] = {}
        self._group: dict[str, int] = {}
        lengths: list[torch.Tensor] = []  # one per distinct length vector (fields of a group share it)
        for key in self.keys:
            values = [it[key] for it in items]
            elem = values[0]
            if isinstance(elem, torch.Tensor) and elem.dim() > 0:
                dim = -1 if key in _LAST_DIM else 0
                self._flat[key] = torch.cat(values, dim=dim)
                self._dim[key] = dim
                lens = torch.tensor([v.size(dim) for v in values], dtype=torch.long)
            elif isinstance(elem, (torch.Tensor, int, float)):  # one value per bag: stacked, like PyG
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
        """The bags ``indices`` (in that order) as one batch, equal to PyG's collation of the same bags."""
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
