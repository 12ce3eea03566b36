"""gnn-chemalgebra: the ChemAlgebra benchmark, a GNN with exact stoichiometric algebra, and its evaluator."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .api import ReactionPredictor

from .version import __version__


def load_predictor(*args: Any, **kwargs: Any) -> ReactionPredictor:
    """A predictor for reaction lines: ``load_predictor().predict(lines)`` -> list of ``Prediction``.

    See :func:`gnn_chemalgebra.api.load_predictor` for the options. Lazy on purpose: torch, RDKit and the
    model load on this call, so ``import gnn_chemalgebra`` stays cheap.
    """
    from .api import load_predictor as _load

    return _load(*args, **kwargs)


__all__ = ["__version__", "load_predictor"]
