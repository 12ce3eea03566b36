"""Check every prediction file of a benchmark run: each molecule parses (RDKit for SMILES) and each line balances
against its source line (element counts with explicit hydrogens, and net charge, coefficient-weighted).

Example::

    python scripts/check_predictions.py --runs runs/bench --built built/full
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from gnn_chemalgebra.chem.molecule import bag_composition
from gnn_chemalgebra.data.layout import split_files, variant_props
from gnn_chemalgebra.errors import ChemAlgebraError
from gnn_chemalgebra.io import read_lines


def totals(line: str, repr_: str) -> Counter | None:
    """Coefficient-weighted composition of a bag, or ``None`` when a molecule does not parse."""
    try:
        return bag_composition(line, repr_)  # type: ignore[arg-type]
    except ChemAlgebraError:
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", default="runs/bench")
    ap.add_argument("--built", default="built/full")
    ap.add_argument("--naive", action="store_true", help="also the naive ablation (it writes unbalanced lines)")
    args = ap.parse_args(argv)
    print("| variant | run | setting | lines | molecules parse | balanced |")
    print("|---|---|---|---|---|---|")
    bad = 0
    runs = ("gnn_std", "gnn_cross", "gnn_naive_std", "gnn_naive_cross") if args.naive else ("gnn_std", "gnn_cross")
    files = sorted(f for r in runs for f in Path(args.runs).glob(f"*/{r}/pred-*.txt"))
    for pred_file in files:
        variant = "ChemAlgebra_" + pred_file.parts[-3]
        setting = pred_file.stem.removeprefix("pred-")
        repr_ = str(variant_props(variant)["repr"])
        preds = read_lines(pred_file)
        src = read_lines(split_files(Path(args.built), variant, setting)[0])[: len(preds)]
        parsed = balanced = 0
        for p, s in zip(preds, src, strict=True):
            t = totals(p, repr_)
            parsed += t is not None
            balanced += t is not None and t == totals(s, repr_)
        bad += len(preds) - balanced
        print(f"| {pred_file.parts[-3]} | {pred_file.parts[-2]} | {setting} | {len(preds)} | {parsed} | {balanced} |")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
