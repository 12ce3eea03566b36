"""ChemAlgebra metrics, reports and ceilings."""
