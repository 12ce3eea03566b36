"""Input files for measuring ``gnnca predict`` on lines at and beyond its size limits (time and peak memory).

Usage::

    python scripts/limit_stress_inputs.py OUT_DIR

writes, one line each:

- ``chain2000.txt``: a 2,000-carbon chain (``C`` * 2000);
- ``bag200.txt``: a bag of 200 different molecules (unbranched alkanes, primary alcohols and amines of 1 to 67
  carbons, 6,833 heavy atoms);
- ``at_limits.txt``: the largest line the default limits take: ``max_molecules`` different molecules, the first a
  chain of ``max_atoms`` carbons, the others small chains with an end group filling the line up to
  ``max_total_atoms`` heavy atoms (the check of :func:`gnn_chemalgebra.chem.limits.check_line` is printed).
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


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    out = Path(args[0])
    out.mkdir(parents=True, exist_ok=True)
    limits = Limits()
    lines = {"chain2000": ["C" * 2000], "bag200": bag200(), "at_limits": at_limits(limits)}
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
