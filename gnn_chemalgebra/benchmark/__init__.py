"""The ChemAlgebra benchmark pipeline behind ``gnnca bench``: train, predict, score and tabulate every model.

One responsibility per module: ``records`` (the results format, resume markers), ``ceilings`` (oracle / Bayes
ceilings of the lines scored), ``trivial`` / ``gnn`` / ``transformer`` (the stages), ``errors`` (why the GNN
misses), ``merge`` (results/benchmark.json), ``tables`` and ``plot`` (what the docs show), ``export``
(bundled checkpoints and model cards), ``checks`` (every prediction file balances), ``edits`` (the bond-edit
model on its own), ``pipeline`` (stages in order, resumable) and ``command`` (the ``gnnca bench`` sub-commands).

Floor: above training, evaluation and inference; only ``gnnca`` imports this package.
"""
