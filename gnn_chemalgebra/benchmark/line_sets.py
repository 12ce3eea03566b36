"""The line files ``gnnca bench calibration`` and ``gnnca bench conformal`` read: a benchmark variant's
``src-<split>.txt`` / ``tgt-<split>.txt``, shifted validation files, and the chemist's sets (real by-products)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..data.layout import variant_short
from ..errors import InputError


@dataclass(frozen=True)
class LineSet:
    """One benchmark file pair of a variant: ``src-<split>.txt`` / ``tgt-<split>.txt``, read as ``line_type`` and
    written in the by-product ``convention`` of its targets (the chemist's sets: ``chemist``)."""

    variant: str
    split: str
    src: Path
    tgt: Path
    line_type: int
    convention: str = "benchmark"

    @property
    def name(self) -> str:
        return f"{variant_short(self.variant)} {self.split}"


def line_sets(built: Path, repr: str, variants: Sequence[str], split: str, missing_ok: bool = False) -> list[LineSet]:
    """The files of ``variants`` (short names such as ``T1_x1``, prefixed ``F_`` / ``S_`` by ``repr``);
    ``missing_ok``: leave out a variant without the split's files instead of stopping."""
    out = []
    for v in variants:
        short = v if v[:2] in ("F_", "S_") else ("S_" if repr == "smiles" else "F_") + v
        name = short if short.startswith("ChemAlgebra_") else f"ChemAlgebra_{short}"
        if (name.split("_")[1] == "S") != (repr == "smiles"):
            raise InputError(f"variant {v} is not in this model's representation ({repr})")
        d = built / name
        src, tgt = d / f"src-{split}.txt", d / f"tgt-{split}.txt"
        if missing_ok and not (src.is_file() and tgt.is_file()):
            continue
        for p in (src, tgt):
            if not p.is_file():
                raise InputError("no such file (build the data first: gnnca data build)", path=str(p))
        out.append(LineSet(name, split, src, tgt, 2 if "_T2_" in name else 1))
    return out


def chemist_sets(folder: Path | None, repr: str, split: str) -> list[LineSet]:
    """The ``split`` (``valid`` or ``test``) Type-1 lines of a ``gnnca data chemist`` folder in ``repr``: reactions
    the benchmark's rule drops, closed with real by-products, so written in the chemist's convention (none without
    a folder)."""
    if folder is None:
        return []
    d = folder / repr
    src, tgt = d / f"src-{split}.txt", d / f"tgt-{split}.txt"
    for p in (src, tgt):
        if not p.is_file():
            raise InputError("no such file (make the chemist's sets first: gnnca data chemist)", path=str(p))
    return [LineSet(f"chemist_{repr}", f"{split}_chemist", src, tgt, 1, "chemist")]


def fit_sets(
    built: Path, repr: str, variants: Sequence[str], shifted: Path | None, shifted_splits: Sequence[str]
) -> list[LineSet]:
    """The validation files a calibration is fitted on: ``src-valid.txt`` of ``variants`` in ``built``, then
    each of ``shifted_splits`` of the same variants in ``shifted`` that it holds (at least one)."""
    out = line_sets(built, repr, variants, "valid")
    if shifted is None:
        return out
    if not shifted.is_dir():
        raise InputError("no such folder of shifted validation files", path=str(shifted))
    more = [ls for sp in shifted_splits for ls in line_sets(shifted, repr, variants, sp, missing_ok=True)]
    if not more:
        raise InputError(f"no shifted validation files ({', '.join(shifted_splits)}) of {', '.join(variants)}",
                         path=str(shifted))  # fmt: skip
    return out + more
