"""Exact stoichiometric algebra: bags, balance, integer nullspace, extents, Type-2 posterior. No torch."""
