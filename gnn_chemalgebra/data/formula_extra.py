"""Formula-only training lines from the extra reactions that the benchmark's leftover rule drops.

USPTO-BAL keeps a reaction only when the atoms one side has beyond the other, written as a chain of bracket
atoms, form a molecule RDKit accepts (:func:`uspto.balance_separated`). Half of the extra USPTO reactions fail
that test (a leftover NH3 or CH3OSO3 has no valid chain), yet their reactants, reagents and products are real
chemistry. A formula line needs no chain: the leftover is the difference composition written as a formula. So
a formula model can learn roles and leftovers from them too, while the decoder keeps only leftovers the
benchmark could have written (:func:`chem.leftover.formula_chain_admissible`).

``gnnca data formula-extra BUILT --out OUT`` reads the rows that ``BUILT/extra_skipped.tsv`` lists as
``leftover_rejected_by_rdkit``, screens them again (product overlap with every MIT valid/test line, duplicates of
each other and of ``BUILT``'s training reactions, all counted), and writes ``OUT``: the formula variants of
``BUILT`` (x1 only) whose ``train`` and ``train_cross`` gain the new lines (appended, own seeded stream), every
other file copied unchanged, and a manifest with counts and sha256. ``BUILT`` itself is not touched.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from ..chem.composition import element_view
from ..chem.formula import write_formula
from ..errors import ChemAlgebraError
from ..io import atomic_write_json
from .layout import split_files, variant_props
from .rejected import screen_rejected
from .uspto import formula_of, side_composition

LEFTOVER_PREFIX = "leftover:"  # key of a leftover in a record's ``formulas`` (it has no SMILES)
SPLITS_EXTENDED = ("train", "train_cross")


def formula_record(prep: dict[str, Any], rid: int, source: dict[str, Any]) -> dict[str, Any] | None:
    """A base record in formula form: the leftover of each side is its difference composition as a formula
    (key ``leftover:<formula>``). ``None`` when the difference holds no element (nothing to write)."""
    reactants, reagents, products = list(prep["reactants"]), list(prep["reagents"]), list(prep["products"])
    r_comp, p_comp = side_composition(reactants), side_composition(products)
    formulas = {s: formula_of(s) for s in dict.fromkeys((*reactants, *reagents, *products))}
    for diff, side in ((r_comp - p_comp, products), (p_comp - r_comp, reactants)):
        if not diff:
            continue
        try:
            f = write_formula(element_view(diff))
        except ChemAlgebraError:
            return None
        formulas[LEFTOVER_PREFIX + f] = f
        side.append(LEFTOVER_PREFIX + f)
    return {"id": rid, "reactants": reactants, "reagents": reagents, "products": products, "formulas": formulas,
            "source": source}  # fmt: skip


def build_formula_extra(
    built: Path,
    out: Path,
    *,
    workers: int = 1,
    seed: int = 0,
    leftover_labels: bool = False,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Write ``out`` (see the module docstring) and return its manifest. Without ``leftover_labels`` the added
    lines carry ``"roles_only": true`` in their meta: they teach roles, and their leftovers (mostly ones the
    benchmark never writes) are not training labels; with it they are (measured: worse, see experiments/studies.md)."""
    from .build import cross_halves, generate_lines, write_columns
    from .manifest import built_files, file_info

    built, out = Path(built), Path(out)
    screened = screen_rejected(built, workers=workers, log=log)
    manifest, counts = screened.manifest, screened.counts
    records: list[dict[str, Any]] = []
    for raw, prep in screened.items:
        source = {"set": raw.source, "split": raw.split, "line": raw.line}
        rec = formula_record(prep, screened.n_train + len(records), source)
        if rec is None:
            counts["no_formula"] += 1
            continue
        records.append(rec)
    counts["kept"] = len(records)
    log("formula extra: " + ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items())))

    out.mkdir(parents=True, exist_ok=True)
    # x1 only: an x5 split repeats each reaction with five draws, which an appended single draw would not match
    variants = sorted(
        v for v in manifest["variants"] if variant_props(v)["repr"] == "formula" and variant_props(v)["x"] == 1
    )
    variant_counts: dict[str, dict[str, int]] = {}
    for v in variants:
        (out / v).mkdir(parents=True, exist_ok=True)
        for p in sorted((built / v).iterdir()):
            if not any(p.name.endswith(f"-{s}.txt") or p.name.endswith(f"-{s}.jsonl") for s in SPLITS_EXTENDED):
                shutil.copyfile(p, out / v / p.name)
        variant_counts[v] = {}
        for split in SPLITS_EXTENDED:
            sets = ["in"] * len(records) if split == "train" else cross_halves(len(records), seed, "formula_extra")
            new = generate_lines(v, split + "_formula_extra", "train", records, sets, seed)
            if not leftover_labels:
                new = _roles_only(new)
            with ExitStack() as stack:
                handles = [stack.enter_context(open(f, encoding="utf-8")) for f in split_files(built, v, split)]
                rows = _chain_rows(zip(*handles, strict=True), new)
                variant_counts[v][split] = write_columns(split_files(out, v, split), rows)
    files = {p.relative_to(out).as_posix(): file_info(p) for p in built_files(out)}
    result = {
        "tool": "gnnca data formula-extra",
        "from": {"built": str(built), "manifest_sha256": file_info(built / "manifest.json")["sha256"]},
        "seed": seed,
        "leftover_labels": leftover_labels,
        "formula_extra": {"rows_listed": screened.listed, "rows_read": screened.read, **dict(sorted(counts.items()))},
        "variants": variant_counts,
        "files": files,
    }
    atomic_write_json(out / "manifest.json", result)
    return result


def _chain_rows(old: Iterable[tuple[str, ...]], new: Iterable[tuple[str, ...]]) -> Iterable[tuple[str, ...]]:
    for row in old:
        yield tuple(x.rstrip("\n") for x in row)
    yield from new


def _roles_only(rows: Iterable[tuple[str, str, str]]) -> Iterable[tuple[str, str, str]]:
    for src, tgt, meta in rows:
        yield src, tgt, meta[:-1] + ',"roles_only":true}'
