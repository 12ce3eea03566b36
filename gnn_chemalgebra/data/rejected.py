"""The extra rows the benchmark's leftover rule drops, read back and screened again.

Shared by ``gnnca data formula-extra`` and ``gnnca data dropped``: both start from the rows that
``BUILT/extra_skipped.tsv`` lists as ``leftover_rejected_by_rdkit`` (a ``gnnca data build --extra`` folder), read
them from the sources ``BUILT`` was built from, and screen them again before writing a line: product overlap with
every USPTO-MIT valid and test line (all 70,000 under the local protocol, kept by the rule or dropped: the target
molecules and the atom-mapped product molecules), duplicates of ``BUILT``'s training reactions and of each other.
Every row read ends in :attr:`Screened.items` or in one count of :attr:`Screened.counts`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from .extra import REMOVED_DUP_EXTRA, REMOVED_OVERLAP, ExtraRaw, local_train_keys, map_rows, mit_product_keys, prepare
from .uspto import SKIP_LEFTOVER_REJECTED, read_split

DUP_BUILT_TRAIN = "duplicate_of_built_train"  # the same reaction as one of BUILT's training reactions


@dataclass
class Screened:
    """The rows that pass the screening, with their :func:`extra.prepare` result, and what happened to the rest."""

    manifest: dict[str, Any]  # BUILT's manifest
    src_dir: Path  # the sources BUILT was built from
    listed: int  # rows extra_skipped.tsv lists as dropped by the rule
    read: int  # of those, rows read (all, or the first ``limit`` in reading order)
    n_train: int  # BUILT's training reactions (ids of added records follow them)
    items: list[tuple[ExtraRaw, dict[str, Any]]] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)  # rows removed on screening, by reason


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


def extra_build(built: Path) -> tuple[dict[str, Any], Path]:
    """The manifest of a ``gnnca data build --extra`` folder and the source folder it was built from."""
    from .build import build_source_dir, read_build_manifest

    manifest = read_build_manifest(built)
    if "extra" not in manifest:
        raise InputError("built without --extra: no extra rows to read", path=str(built / "manifest.json"))
    return manifest, build_source_dir(manifest)


def screen_rejected(
    built: Path, *, workers: int = 1, limit: int | None = None, log: Callable[[str], None] = print
) -> Screened:
    """The rows of ``built`` that the leftover rule dropped (the first ``limit`` in reading order, if given),
    screened again; see the module docstring."""
    from .extra import read_extra

    manifest, src_dir = extra_build(built)
    wanted = rejected_rows(built / "extra_skipped.tsv")
    raws, _ = read_extra(src_dir, manifest.get("limit"))
    raws = [r for r in raws if (r.source, r.split, r.line) in wanted]
    if limit:
        raws = raws[:limit]
    log(f"{len(raws):,} extra rows dropped by the leftover rule read (of {len(wanted):,} listed)")

    mit_lines: list[str] = []
    for split in ("valid", "test"):  # read_split refuses a source without them: no screening, no lines
        for raw in read_split(src_dir, split, None):
            mit_lines += [raw.target, raw.mapped.split(">")[-1]]
    mit_keys = mit_product_keys(mit_lines, workers)
    train_path = built / "uspto_bal" / "reactions-train.jsonl"
    train_recs = [json.loads(x) for x in train_path.read_text(encoding="utf-8").splitlines()]
    seen = local_train_keys(train_recs)
    train_keys = set(seen)
    out = Screened(manifest, src_dir, len(wanted), len(raws), len(train_recs))
    for raw, prep in zip(raws, map_rows(prepare, raws, workers, "rejected rows: prepare"), strict=True):
        if "keys" not in prep or "reason" in prep:
            out.counts[prep.get("reason", "unparsable")] += 1
            continue
        if any(k in mit_keys for k in prep["keys"]):
            out.counts[REMOVED_OVERLAP] += 1
            continue
        if prep["key"] in seen:
            out.counts[DUP_BUILT_TRAIN if prep["key"] in train_keys else REMOVED_DUP_EXTRA] += 1
            continue
        seen.add(prep["key"])
        out.items.append((raw, prep))
    return out
