"""The edit model's featurised training examples, packed into flat tensors and cached on disk once.

Featurising a reaction (RDKit graphs, distance matrices, every candidate pair, gold labels) costs about 5-8 ms,
so the 63,672 usable reactions of ``gnnca data build --extra`` take 5-9 CPU-minutes, which every start and
every ``--resume`` of a run would otherwise redo. :class:`PackedEditExamples` holds every field of every example
concatenated once (along the dimension PyG concatenates it in a batch) with per-example offsets, and gives back
example ``i`` as an :class:`~.edit_dataset.EditData` of views into those tensors (equal, field for field, to the
example it was packed from; ``tests/data/test_edit_cache.py``). It saves and loads as plain tensors and JSON
through :mod:`gnn_chemalgebra.checkpoint` (atomic write, ``torch.load(weights_only=True)``).

The cache file name holds a hash of everything the examples depend on: the records file's sha256, the split,
the line limit, the sources kept, ``max_pairs``, both featuriser versions and the RDKit version
(:func:`example_cache_key`). A changed input is a different file, never a stale hit.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from ..checkpoint import load_checkpoint, save_checkpoint
from ..errors import InputError
from ..io import sha256_file
from .edit_dataset import EDIT_FEATURIZER_VERSION, EditData
from .featurize import FEATURIZER_VERSION

CACHE_FORMAT = 1


class PackedEditExamples(Sequence):
    """Every example's fields concatenated once; ``self[i]`` is example ``i`` as views into them."""

    def __init__(self, flat: dict[str, torch.Tensor], offsets: dict[str, torch.Tensor], dims: dict[str, int],
                 scalars: dict[str, torch.Tensor]) -> None:  # fmt: skip
        self.flat, self.offsets, self.dims, self.scalars = flat, offsets, dims, scalars
        self.n = int(next(iter(scalars.values())).numel()) if scalars else 0

    @classmethod
    def pack(cls, examples: Sequence[EditData]) -> PackedEditExamples:
        if not examples:
            return cls({}, {}, {}, {"num_nodes": torch.zeros(0, dtype=torch.long)})
        flat, offsets, dims, scalars = {}, {}, {}, {}
        first = examples[0]
        for key in first.keys():
            value = first[key]
            if isinstance(value, torch.Tensor):
                dim = int(first.__cat_dim__(key, value))
                parts = [e[key] for e in examples]
                flat[key] = torch.cat(parts, dim=dim)
                lens = torch.tensor([p.size(dim) for p in parts], dtype=torch.long)
                offsets[key] = torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(lens, 0)])
                dims[key] = dim
            elif isinstance(value, int) and not isinstance(value, bool):
                scalars[key] = torch.tensor([int(e[key]) for e in examples], dtype=torch.long)
            else:
                raise TypeError(f"PackedEditExamples: field {key!r} of type {type(value).__name__}")
        scalars["num_nodes"] = torch.tensor([int(e.num_nodes) for e in examples], dtype=torch.long)
        return cls(flat, offsets, dims, scalars)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> EditData:  # type: ignore[override]
        if not -self.n <= i < self.n:
            raise IndexError(i)
        i %= self.n
        fields: dict[str, Any] = {}
        for key, t in self.flat.items():
            a, b = int(self.offsets[key][i]), int(self.offsets[key][i + 1])
            fields[key] = t.narrow(self.dims[key], a, b - a)
        for key, t in self.scalars.items():
            fields[key] = int(t[i])
        return EditData(**fields)

    def state(self) -> dict[str, Any]:
        """Plain tensors and a JSON-able index (what :func:`save_examples` writes)."""
        out: dict[str, Any] = {f"flat.{k}": v for k, v in self.flat.items()}
        out.update({f"off.{k}": v for k, v in self.offsets.items()})
        out.update({f"scalar.{k}": v for k, v in self.scalars.items()})
        out["meta"] = {"dims": self.dims, "n": self.n}
        return out

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> PackedEditExamples:
        dims = {k: int(v) for k, v in state["meta"]["dims"].items()}
        flat = {k: state[f"flat.{k}"] for k in dims}
        offsets = {k: state[f"off.{k}"] for k in dims}
        scalars = {k[len("scalar.") :]: v for k, v in state.items() if k.startswith("scalar.")}
        return cls(flat, offsets, dims, scalars)


def example_cache_key(records_path: str | Path, **inputs: Any) -> str:
    """sha256 over the records file's sha256, ``inputs`` (split, limit, sources, max_pairs ...), both
    featuriser versions and the RDKit version."""
    from rdkit import __version__ as rdkit_version

    parts = {
        "format": CACHE_FORMAT,
        "records_sha256": sha256_file(records_path),
        "edit_featurizer": EDIT_FEATURIZER_VERSION,
        "graph_featurizer": FEATURIZER_VERSION,
        "rdkit": rdkit_version,
        **inputs,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def save_examples(path: str | Path, packed: PackedEditExamples, report: dict[str, Any], key: str) -> None:
    """Atomic write of the packed examples with their build report (counts per source, skip causes)."""
    state = packed.state()
    meta = state.pop("meta")
    save_checkpoint(path, {**state, "meta": {**meta, "key": key, "report": report}})


def load_examples(path: str | Path, key: str) -> tuple[PackedEditExamples, dict[str, Any]]:
    """The packed examples and build report of a cache file; an :class:`InputError` when its key differs."""
    ck = load_checkpoint(path, require=("meta",), kind="edit-example cache")
    meta = ck["meta"]
    if meta.get("key") != key:
        raise InputError("edit-example cache written for other inputs (key mismatch)", path=str(path))
    return PackedEditExamples.from_state(ck), meta["report"]
