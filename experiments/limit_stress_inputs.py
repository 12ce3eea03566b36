"""Input files for measuring ``gnnca predict`` on lines at and beyond its size limits (time and peak memory):
with the default limits a 2,000-atom chain and a 200-molecule bag are refused in one line in a few seconds under
320 MiB, and the largest line they accept is answered in 2.4 s CPU at 381 MiB (experiments/limits.md has the table).

Usage::

    python experiments/limit_stress_inputs.py OUT_DIR
    python experiments/limit_stress_inputs.py --edit-peak N

The first writes, one line each:

- ``chain2000.txt``: a 2,000-carbon chain (``C`` * 2000);
- ``bag200.txt``: a bag of 200 different molecules (unbranched alkanes, primary alcohols and amines of 1 to 67
  carbons, 6,833 heavy atoms);
- ``at_limits.txt``: the largest line the default limits take: ``max_molecules`` different molecules, the first a
  chain of ``max_atoms`` carbons, the others small chains with an end group filling the line up to
  ``max_total_atoms`` heavy atoms (the check of :func:`gnn_chemalgebra.chem.limits.check_line` is printed);
- ``two_chains.txt``: the most atoms the default limits let the edit model pair: two different chains of
  ``max_atoms`` heavy atoms (``max_total_atoms`` in all). Explicit hydrogens add none: RDKit's parse folds a
  bonded ``[H]`` into its atom.

``--edit-peak N``: the bundled edit model and beam on one reaction whose reactant is a chain of ``N`` carbons (every
one of its ``N * (N - 1) / 2`` atom pairs scored), with the peak memory it adds to the loaded model and its CPU time.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gnn_chemalgebra.chem.bag import Term
from gnn_chemalgebra.chem.limits import Limits, check_line, line_sizes


def bag200() -> list[str]:
    mols = [f"{'C' * n}{end}" for n in range(1, 68) for end in ("", "O", "N")]
    return mols[:200]


def at_limits(limits: Limits) -> list[str]:
    """``max_molecules`` different molecules with ``max_total_atoms`` heavy atoms, the largest ``max_atoms``: a
    chain, then small chains with one end group each (sizes as close to even as distinct molecules allow), the
    last one of the size that makes the total exact."""
    ends = ("", "O", "N", "F", "Cl", "Br", "S")
    pool = [("C" * n + end, n + (end != "")) for n in range(1, limits.max_atoms) for end in ends]
    k = limits.max_molecules - 1
    left = limits.max_total_atoms - limits.max_atoms
    avg = left / k
    picked = sorted(pool, key=lambda p: (abs(p[1] - avg), p[1], p[0]))[: k - 1]
    rest = left - sum(size for _, size in picked)
    used = {m for m, _ in picked}
    last = next(m for m, size in pool if size == rest and m not in used)
    return ["C" * limits.max_atoms, *(m for m, _ in picked), last]


def edit_peak(n: int) -> str:
    """Peak memory added and CPU seconds of the edit model and beam on an ``n``-carbon chain (all pairs)."""
    import resource
    import time

    import torch

    from gnn_chemalgebra.inference.edit_decode import BUNDLED_CHECKPOINT, EditPredictor

    torch.set_num_threads(1)
    pred = EditPredictor.from_checkpoint(BUNDLED_CHECKPOINT)
    pred.predict([(["CCO"], [])], beam=1)
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.process_time()
    found = pred.predict([(["C" * n], [])], beam=5)[0]
    cpu = time.process_time() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    return (
        f"{n:,}-carbon chain, {n * (n - 1) // 2:,} pairs: peak RSS {after.ru_maxrss / 1024:,.0f} MiB "
        f"(+{(after.ru_maxrss - before.ru_maxrss) / 1024:,.0f} MiB over the loaded model), {cpu:.1f} s CPU, "
        f"{len(found)} candidate(s)"
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 2 and args[0] == "--edit-peak":
        print(edit_peak(int(args[1])))
        return 0
    if len(args) != 1:
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    out = Path(args[0])
    out.mkdir(parents=True, exist_ok=True)
    limits = Limits()
    lines = {
        "chain2000": ["C" * 2000],
        "bag200": bag200(),
        "at_limits": at_limits(limits),
        "two_chains": ["C" * limits.max_atoms, "C" * (limits.max_atoms - 1) + "O"],
    }
    for name, mols in lines.items():
        text = ".".join(mols)
        (out / f"{name}.txt").write_text(text + "\n", encoding="utf-8")
        s = line_sizes(text, mols)
        why = check_line(text, [Term(1, m) for m in mols], limits)
        print(
            f"{name}: {s.chars:,} characters, {s.molecules} molecules, largest {s.max_atoms:,} heavy atoms, "
            f"{s.total_atoms:,} in all; default limits: {why or 'accepted'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
