"""One bag's fields: what :meth:`~.featurize.Featurizer.bag` builds and :func:`~.dataset.to_data` labels, batched
by :mod:`.bagbatch` (the project's one batching path; PyG's ``Data``/``Batch`` are not used for bags).

Imports nothing: a plain ``dict`` of tensors and counts.
"""

from __future__ import annotations

from typing import Any


class BagData(dict):
    """One bag's fields by name (``z``, ``x``, ``edge_index``, ..., ``num_mols``, ``num_nodes``), also read and
    written as attributes: ``bag.num_mols``, ``bag.y_role = ...``. An absent field is an ``AttributeError`` (so
    ``getattr(bag, name, None)`` reads it as absent)."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value
