"""The largest input lines of built data, from which the defaults of ``gnnca predict``'s size limits are chosen:
in built/extra the largest line has 1,002 characters, 26 molecules, a molecule of 205 heavy atoms and 410 heavy
atoms in all, and the string count of heavy atoms equals RDKit's on all 259,702 distinct molecules.

Usage::

    python experiments/limit_maxima.py built/extra [built/full ...] [--check-rdkit] [--json out.json]

Reads every ``src-*.txt`` under the folders (a ChemAlgebra variant's bags, ``uspto_bal``'s bags, the
``reactants>reagents`` lines of ``uspto_mit_separated``) and reports, per folder and over all of them, the
largest line in characters, molecules, heavy atoms of one molecule and heavy atoms of one line, each with the
file and line where it occurs (:func:`gnn_chemalgebra.chem.limits.line_sizes`, the measure the limits use).
Formula variants (``_F_`` in the folder name) are counted as formulas, everything else as SMILES.
``--check-rdkit``: also compare the token count of heavy atoms with RDKit's ``GetNumHeavyAtoms`` on every
distinct SMILES molecule (the count the limits use needs no RDKit parse). ``--time-check``: also the CPU time of
:func:`~gnn_chemalgebra.chem.limits.limit_error` (what ``gnnca predict`` runs on each parsed line) per line of
each representation, the files read twice and the second pass timed (its caches warm, as in a long input).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from gnn_chemalgebra.chem.bag import parse_bag
from gnn_chemalgebra.chem.limits import Limits, limit_error, line_sizes, smiles_heavy_atoms

MEASURES = ("chars", "molecules", "max_atoms", "total_atoms")


def _molecules(line: str) -> list[str]:
    """The input molecules of one line: a bag's terms, or the reactants and reagents of ``a>b`` / ``a>b>c``."""
    if ">" in line.replace("->", "").replace("<-", ""):
        parts = line.split(">")
        return [m for side in parts[:2] for m in side.split(".") if m]
    return [t.mol for t in parse_bag(line)]


def measure(files: list[Path]) -> tuple[dict[str, dict], set[str]]:
    """Per measure, the largest value with its file and line; and the distinct SMILES molecules met."""
    best: dict[str, dict] = {m: {"value": -1} for m in MEASURES}
    smiles: set[str] = set()
    for path in files:
        repr = "formula" if "_F_" in path.parent.name else "smiles"
        with path.open(encoding="utf-8") as fh:
            for n, raw in enumerate(fh, start=1):
                line = raw.rstrip("\n")
                if not line.strip():
                    continue
                mols = _molecules(line)
                if repr == "smiles":
                    smiles.update(mols)
                sizes = line_sizes(line, mols, repr)
                for m in MEASURES:
                    v = getattr(sizes, m)
                    if v > best[m]["value"]:
                        best[m] = {"value": v, "file": str(path), "line": n, "molecule": sizes.largest[:80]}
    return best, smiles


def check_cost(files: list[Path]) -> dict[str, float]:
    """Microseconds of CPU per line of :func:`limit_error` with the default limits, per representation."""
    lines: dict[str, list[tuple[str, list[str]]]] = {"smiles": [], "formula": []}
    for path in files:
        repr = "formula" if "_F_" in path.parent.name else "smiles"
        with path.open(encoding="utf-8") as fh:
            lines[repr] += [(ln.rstrip("\n"), _molecules(ln.rstrip("\n"))) for ln in fh if ln.strip()]
    limits, out = Limits(), {}
    for repr, got in lines.items():
        if not got:
            continue
        for timed in (False, True):
            start = time.process_time()
            for text, mols in got:
                limit_error(text, mols, limits, repr)
            if timed:
                out[repr] = (time.process_time() - start) / len(got) * 1e6
    return out


def rdkit_disagreements(smiles: set[str]) -> tuple[int, list[tuple[str, int, int]]]:
    """Molecules RDKit reads, and those whose token count differs from ``GetNumHeavyAtoms``."""
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    read, bad = 0, []
    for s in sorted(smiles):
        mol = Chem.MolFromSmiles(s)
        if mol is None:
            continue
        read += 1
        if mol.GetNumHeavyAtoms() != smiles_heavy_atoms(s):
            bad.append((s, mol.GetNumHeavyAtoms(), smiles_heavy_atoms(s)))
    return read, bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", help="Built data folders (gnnca data build).")
    ap.add_argument("--check-rdkit", action="store_true", help="Compare the heavy-atom count with RDKit's.")
    ap.add_argument("--time-check", action="store_true", help="Time the limit check per line.")
    ap.add_argument("--json", default="", help="Also write the maxima here.")
    args = ap.parse_args(argv)
    report: dict[str, dict] = {}
    every: list[Path] = []
    all_smiles: set[str] = set()
    for folder in args.folders:
        files = sorted(Path(folder).glob("*/src-*.txt"))
        if not files:
            print(f"{folder}: no src-*.txt files", file=sys.stderr)
            return 2
        every += files
        report[folder], smiles = measure(files)
        all_smiles |= smiles
        print(f"{folder} ({len(files)} files):")
        for m in MEASURES:
            b = report[folder][m]
            print(f"  {m:12s} {b['value']:>7,}  {b['file']}:{b['line']}  {b['molecule']}")
    if len(args.folders) > 1:
        report["all"], _ = measure(every)
        print("all: " + ", ".join(f"{m} {report['all'][m]['value']:,}" for m in MEASURES))
    if args.check_rdkit:
        read, bad = rdkit_disagreements(all_smiles)
        report["rdkit_check"] = {"molecules": read, "disagreements": bad[:20], "n_disagreements": len(bad)}
        print(f"heavy atoms: token count == RDKit GetNumHeavyAtoms on {read - len(bad):,} of {read:,} molecules")
        for s, want, got in bad[:20]:
            print(f"  {s}: RDKit {want}, tokens {got}")
    if args.time_check:
        report["check_us_per_line"] = check_cost(every)
        for repr, us in report["check_us_per_line"].items():
            print(f"limit check: {us:.2f} us of CPU per {repr} line")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
