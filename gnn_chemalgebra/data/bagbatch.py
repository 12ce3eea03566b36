"""Batches of bags without torch_geometric, for the network's inference path.

:func:`collate_bags` concatenates the fields of several bags (:class:`~.featurize.BagData` objects, or the plain
:class:`BagFields` that :meth:`~.featurize.Featurizer.bag_fields` gives) into a :class:`BagBatch` that holds, for
every field, the tensor ``torch_geometric.data.Batch.from_data_list`` builds for the same bags as ``BagData``:
node-level fields are concatenated, ``edge_index`` is shifted by the atoms of the bags before it, ``atom2mol`` by
their molecules, ``mol_graph``/``ext_graph`` by their count; ``batch`` (atom -> bag) and ``ptr`` are added
(``tests/data/test_bagbatch.py`` compares every key with PyG's). The network reads the same numbers either way;
importing PyG costs a noticeable share of ``gnnca predict``'s start-up, and a formula prediction needs nothing
else from it. Training keeps PyG's loader.

Imports torch only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

# field -> what is added to each bag's values: the atoms ("nodes"), molecules or bags before it
_SHIFT_BY: dict[str, str] = {"edge_index": "nodes", "atom2mol": "mols", "mol_graph": "bags", "ext_graph": "bags"}
_LAST_DIM = frozenset({"edge_index"})  # concatenated along the last dimension (PyG: 'index' in the key)


class BagFields(dict):
    """One bag's fields by name (``z``, ``x``, ``edge_index``, ..., ``num_mols``, ``num_nodes``); also readable
    as attributes, like ``BagData``: ``bag.num_mols``."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


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


def _as_fields(bag: Any) -> Mapping[str, Any]:
    if isinstance(bag, Mapping):
        return bag
    return {k: bag[k] for k in bag.keys()}  # a PyG Data (BagData): its stored attributes, in insertion order


def collate_bags(bags: Sequence[Any]) -> BagBatch:
    """One batch of ``bags`` (``BagData`` or :class:`BagFields`, all with the same fields)."""
    if not bags:
        raise ValueError("collate_bags: no bags")
    items = [_as_fields(b) for b in bags]
    nodes = [int(it["num_nodes"]) for it in items]
    shifts = {"nodes": nodes, "mols": [int(it["num_mols"]) for it in items], "bags": [1] * len(items)}
    out: dict[str, Any] = {}
    for key in items[0]:
        if key == "num_nodes":
            continue
        values = [it[key] for it in items]
        by = _SHIFT_BY.get(key)
        if by is not None:
            before, values = 0, list(values)
            for i, n in enumerate(shifts[by]):
                if before:
                    values[i] = values[i] + before
                before += n
        elem = values[0]
        if isinstance(elem, torch.Tensor):
            if elem.dim() == 0:
                out[key] = torch.stack(values)
            else:
                out[key] = torch.cat(values, dim=-1 if key in _LAST_DIM else 0)
        elif isinstance(elem, (int, float)):
            out[key] = torch.tensor(values)
        else:
            out[key] = list(values)
    out["batch"] = torch.cat([torch.full((n,), i) for i, n in enumerate(nodes)])
    out["ptr"] = torch.tensor([0, *nodes]).cumsum(0)
    return BagBatch(out, len(items), sum(nodes))
