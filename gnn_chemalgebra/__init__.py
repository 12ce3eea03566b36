"""gnn-chemalgebra: the ChemAlgebra benchmark, a GNN with exact stoichiometric algebra, and its evaluator."""

__version__ = "0.1.0"
