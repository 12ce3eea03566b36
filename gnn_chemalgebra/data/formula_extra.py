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

import json
import shutil
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from ..chem.composition import element_view
from ..chem.formula import write_formula
from ..errors import ChemAlgebraError, InputError
from ..io import atomic_write_json
from .layout import split_files, variant_props
from .uspto import SKIP_LEFTOVER_REJECTED, formula_of, read_split, side_composition

LEFTOVER_PREFIX = "leftover:"  # key of a leftover in a record's ``formulas`` (it has no SMILES)
SPLITS_EXTENDED = ("train", "train_cross")
DUP_BUILT_TRAIN = "duplicate_of_built_train"  # the same reaction as one of BUILT's training reactions


def rejected_rows(skipped_tsv: Path) -> set[tuple[str, str, int]]:
    """``(source, split, line)`` of every extra row the build dropped for its leftover chain."""
    if not skipped_tsv.exists():
        raise InputError("no extra_skipped.tsv: build with gnnca data build --extra first", path=str(skipped_tsv))
    out = set()
    with open(skipped_tsv, encoding="utf-8") as fh:
        next(fh, None)
        for line in fh:
            cells = line.rstrip("\n").split("\t")
            if len(cells) >= 4 and cells[3] == SKIP_LEFTOVER_REJECTED:
                out.add((cells[0], cells[1], int(cells[2])))
    return out


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
    from .build import bundled_data_dir, cross_halves, file_info, generate_lines, write_columns
    from .extra import (
        REMOVED_DUP_EXTRA,
        REMOVED_OVERLAP,
        local_train_keys,
        map_rows,
        mit_product_keys,
        prepare,
        read_extra,
    )

    built, out = Path(built), Path(out)
    mpath = built / "manifest.json"
    if not mpath.exists():
        raise InputError("no manifest.json (not a gnnca data build folder)", path=str(built))
    manifest = json.loads(mpath.read_text(encoding="utf-8"))
    if "extra" not in manifest:
        raise InputError("built without --extra: no extra rows to read", path=str(mpath))
    source = manifest.get("source")
    src_dir = Path(source) if source not in (None, "bundled data/") else bundled_data_dir()
    wanted = rejected_rows(built / "extra_skipped.tsv")
    raws, _ = read_extra(src_dir)
    raws = [r for r in raws if (r.source, r.split, r.line) in wanted]
    log(f"{len(raws):,} extra rows dropped by the leftover rule (of {len(wanted):,} listed)")

    # screen again: product overlap with every MIT valid/test line, duplicates of training and of each other
    mit_lines: list[str] = []
    for split in ("valid", "test"):  # read_split refuses a source without them: no screening, no lines
        for raw in read_split(src_dir, split, None):
            mit_lines += [raw.target, raw.mapped.split(">")[-1]]
    mit_keys = mit_product_keys(mit_lines, workers)
    train_path = built / "uspto_bal" / "reactions-train.jsonl"
    train_recs = [json.loads(x) for x in train_path.read_text(encoding="utf-8").splitlines()]
    seen = local_train_keys(train_recs)
    train_keys = set(seen)
    counts: Counter = Counter()
    records: list[dict[str, Any]] = []
    n_train = len(train_recs)
    for raw, prep in zip(raws, map_rows(prepare, raws, workers, "formula extra: prepare"), strict=True):
        if "keys" not in prep or "reason" in prep:
            counts[prep.get("reason", "unparsable")] += 1
            continue
        if any(k in mit_keys for k in prep["keys"]):
            counts[REMOVED_OVERLAP] += 1
            continue
        if prep["key"] in seen:
            counts[DUP_BUILT_TRAIN if prep["key"] in train_keys else REMOVED_DUP_EXTRA] += 1
            continue
        seen.add(prep["key"])
        rec = formula_record(prep, n_train + len(records), {"set": raw.source, "split": raw.split, "line": raw.line})
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
    files = {
        p.relative_to(out).as_posix(): file_info(p)
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name != "manifest.json" and not p.name.startswith(".")
    }
    result = {
        "tool": "gnnca data formula-extra",
        "from": {"built": str(built), "manifest_sha256": file_info(mpath)["sha256"]},
        "seed": seed,
        "leftover_labels": leftover_labels,
        "formula_extra": {"rows_listed": len(wanted), "rows_read": len(raws), **dict(sorted(counts.items()))},
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
