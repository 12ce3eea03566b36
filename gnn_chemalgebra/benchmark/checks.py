"""Every prediction file of a benchmark run checked: each molecule parses (RDKit for SMILES) and each line
balances against its source line (element counts with explicit hydrogens and net charge, coefficient-weighted).
A line identical to its source is the predictor's fallback (no hypothesis balanced) or a predicted no reaction
(every molecule a reagent); the prediction files do not say which. Either balances trivially, so such lines are
counted apart and not claimed as balanced predictions."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..chem.molecule import bag_composition
from ..data.layout import split_files, variant_props
from ..errors import ChemAlgebraError, InputError
from ..io import read_lines

GNN_RUNS = ("gnn_std", "gnn_cross")
NAIVE_RUNS = ("gnn_naive_std", "gnn_naive_cross")


@dataclass
class FileCheck:
    variant: str
    run: str
    setting: str
    lines: int
    parsed: int
    balanced: int
    fallback: int = 0


def totals(line: str, repr_: str) -> Counter | None:
    """Coefficient-weighted composition of a bag, or ``None`` when a molecule does not parse."""
    try:
        return bag_composition(line, repr_)  # type: ignore[arg-type]
    except ChemAlgebraError:
        return None


def check_file(pred_file: Path, built: Path) -> FileCheck:
    """``<runs>/<variant>/<run>/pred-<setting>.txt`` against the first lines of the setting's source file."""
    short, run = pred_file.parts[-3], pred_file.parts[-2]
    variant, setting = "ChemAlgebra_" + short, pred_file.stem.removeprefix("pred-")
    repr_ = str(variant_props(variant)["repr"])
    preds = read_lines(pred_file)
    src = read_lines(split_files(built, variant, setting)[0])[: len(preds)]
    parsed = balanced = fallback = 0
    for p, s in zip(preds, src, strict=True):
        t = totals(p, repr_)
        parsed += t is not None
        balanced += t is not None and t == totals(s, repr_)
        fallback += p == s
    return FileCheck(short, run, setting, len(preds), parsed, balanced, fallback)


def check_runs(runs: Path, built: Path, run_names: Sequence[str] = GNN_RUNS) -> list[FileCheck]:
    """Every ``<runs>/<variant>/<run>/pred-*.txt``; no folder or no prediction file is an error, not a pass."""
    for folder, what in ((runs, "run folder"), (built, "built data folder")):
        if not Path(folder).is_dir():
            raise InputError(f"{what} not found", path=str(folder))
    files = sorted(f for r in run_names for f in runs.glob(f"*/{r}/pred-*.txt"))
    if not files:
        raise InputError(f"no prediction files (<variant>/{{{','.join(run_names)}}}/pred-*.txt)", path=str(runs))
    return [check_file(f, built) for f in files]


def checks_table(rows: Sequence[FileCheck]) -> str:
    out = ["| variant | run | setting | lines | molecules parse | balanced | source copied (fallback, no reaction) |"]
    out.append("|---|---|---|---|---|---|---|")
    out += [
        f"| {r.variant} | {r.run} | {r.setting} | {r.lines} | {r.parsed} | {r.balanced} | {r.fallback} |" for r in rows
    ]
    total, bal, fb = (sum(getattr(r, k) for r in rows) for k in ("lines", "balanced", "fallback"))
    summary = (
        f"{bal:,} of {total:,} lines balance in {len(rows)} prediction files; {fb:,} of them are fallbacks or a "
        f"predicted no reaction, i.e. the source copied (balanced predictions with a reaction: {bal - fb:,})"
    )
    return "\n".join([*out, "", summary, ""])
