"""The PyG ``Data`` class of one bag (training and the validation path); prediction batches bags without PyG
(:meth:`~.featurize.Featurizer.bag_fields`, :mod:`.bagbatch`), so importing :mod:`.featurize` does not import PyG."""

from __future__ import annotations

from typing import Any

from torch_geometric.data import Data


class BagData(Data):
    """A bag of molecule graphs; ``atom2mol``/``mol_graph``/``ext_graph`` batch correctly."""

    def __inc__(self, key: str, value: Any, *args: Any, **kwargs: Any) -> Any:
        if key == "atom2mol":
            return int(self.num_mols)
        if key in ("mol_graph", "ext_graph"):
            return 1
        return super().__inc__(key, value, *args, **kwargs)
