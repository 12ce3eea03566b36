"""``gnnca data dropped``: training lines from the extra reactions the benchmark's leftover rule drops.

USPTO-BAL keeps a reaction only when its leftover forms a chain RDKit accepts; of the extra sources (USPTO-500-MT,
USPTO-full) that rule drops more than it keeps, and with them most everyday chemistry (amide couplings, ester
hydrolyses, Boc removals). Their reactants and products are still real: closed with real by-products (water,
alcohols, CO2 and isobutene, salts) where the atoms allow, they teach the roles, the product and the by-product in
the chemist's convention (the convention of ``gnnca data chemist``'s test sets, which hold the dropped USPTO-MIT
valid and test reactions and never share a product with these: every row is screened against all of them).

``gnnca data dropped BUILT --out OUT`` reads a ``gnnca data build --extra`` folder (only read) and writes::

    OUT/manifest.json            counts (listed, read, screened out by reason, closed, not closed by reason,
                                 by-products, mapped and unmapped), every file's line count and sha256
    OUT/reactions-train.jsonl    one closed reaction per line: SMILES, coefficients, formulas, source row and,
                                 for USPTO-full rows, the atom-mapped reaction (USPTO-500-MT has no maps: null)
    OUT/unbalanced.tsv           source, split, line, reason -- one row per screened row not closed
    OUT/ChemAlgebra_{S,F}_T1_x1/{src,tgt,meta}-train   Type-1 lines (:func:`chemist_lines.chemist_line`)
    OUT/ChemAlgebra_{S,F}_T2_x1/{src,tgt,meta}-train   Type-1 and Type-2 lines interleaved (T1 line i, T2 line i),
                                 the mix the bundled models train on (:mod:`.dropped_lines`)

Every meta line says ``"convention": "chemist"``, its ``source`` row and ``"mapped"`` (whether the reaction has
atom maps: only mapped reactions can train the bond-edit model; unmapped ones train the bag model's roles,
extent and by-products, which need none). Train on them beside a benchmark folder with ``data.extra_dirs``.
Deterministic for a seed; each reaction's draws depend on its own id only, so the SMILES and formula lines of a
reaction are the same draw.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..algebra.extent import S_IN
from ..errors import InputError
from ..io import atomic_write_json, atomic_write_lines
from .byproduct_close import MAX_ADDED, close_sides
from .chemist_lines import chemist_line
from .dropped_lines import type2_line, written_names_distinct
from .extra import SOURCE_FULL, ExtraRaw, forward_mapped, map_rows
from .rejected import screen_rejected
from .uspto import formula_of

REPRS = {"S": "smiles", "F": "formula"}


def close_row(item: tuple[ExtraRaw, dict[str, Any], int]) -> dict[str, Any]:
    """Close one screened row (runs in a worker); the result of :func:`byproduct_close.close_sides` plus, for a
    USPTO-full row, its atom-mapped reaction."""
    raw, prep, max_added = item
    res = close_sides(prep["reactants"], prep["reagents"], prep["products"], max_added)
    if res["ok"] and raw.source == SOURCE_FULL:
        try:
            res["mapped"] = forward_mapped(raw.reactants.split("."), raw.product)
        except Exception:  # noqa: BLE001 - a map RDKit cannot write: the reaction stays, unmapped (counted)
            res["mapped"] = None
    return res


def build_dropped(
    built: str | Path,
    out: str | Path,
    *,
    seed: int = 0,
    workers: int = 1,
    limit: int | None = None,
    max_added: int = MAX_ADDED,
    roles_only: bool = False,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Write ``out`` (see the module docstring) from the ``--extra`` build in ``built``; return its manifest.

    ``limit``: only the first N rows the rule dropped (reading order), to measure a slice. ``roles_only``: the
    lines' by-products are not training labels (meta ``roles_only``), as ``gnnca data formula-extra`` writes."""
    from .manifest import built_files, file_info

    built, out = Path(built), Path(out)
    if out.resolve() == built.resolve() or built.resolve() in out.resolve().parents:
        raise InputError("--out must be outside the build folder it reads (its files stay as built)", path=str(out))
    t0 = time.perf_counter()
    screened = screen_rejected(built, workers=workers, limit=limit, log=log)
    t_screen = time.perf_counter() - t0
    items = [(raw, prep, max_added) for raw, prep in screened.items]
    reasons: Counter = Counter()
    byproducts: Counter = Counter()
    records: list[dict[str, Any]] = []
    unbalanced = ["source\tsplit\tline\treason"]
    for (raw, _, _), res in zip(items, map_rows(close_row, items, workers, "dropped: close"), strict=True):
        if not res.pop("ok"):
            reasons[res["reason"]] += 1
            unbalanced.append(f"{raw.source}\t{raw.split}\t{raw.line}\t{res['reason']}")
            continue
        rec = {"id": len(records), "mit_split": None, "mit_index": None, **res}
        rec["mapped"] = res.get("mapped")
        rec["source"] = {"set": raw.source, "split": raw.split, "line": raw.line}
        species = [*rec["reactants"], *rec["reagents"], *rec["products"], *rec["byproducts"]]
        rec["formulas"] = {m: formula_of(m) for m in dict.fromkeys(species)}
        byproducts.update(rec["byproducts"])
        records.append(rec)
    t_close = time.perf_counter() - t0 - t_screen

    out.mkdir(parents=True, exist_ok=True)
    atomic_write_lines(out / "reactions-train.jsonl", (json.dumps(r, separators=(",", ":")) for r in records))
    atomic_write_lines(out / "unbalanced.tsv", unbalanced)
    lines, skipped_t2 = _write_lines(out, records, seed, roles_only)
    n_mapped = sum(1 for r in records if r["mapped"])
    counts = {
        "rows_listed": screened.listed,
        "rows_read": screened.read,
        "screened_out": dict(screened.counts.most_common()),
        "closed": len(records),
        "not_closed": dict(reasons.most_common()),
        "byproducts": dict(byproducts.most_common()),
        "mapped": n_mapped,
        "unmapped": len(records) - n_mapped,
        "lines": lines,
        "type2_not_written": skipped_t2,
    }
    log(
        f"dropped: {len(records):,} of {len(items):,} screened rows closed ({n_mapped:,} with atom maps); "
        f"screened out: {dict(screened.counts.most_common())}; not closed: {dict(reasons.most_common())}"
    )
    log(f"dropped: screening {t_screen:.0f} s, closing {t_close:.0f} s ({len(items) / max(t_close, 1e-9):.1f} rows/s)")
    files = {p.relative_to(out).as_posix(): file_info(p) for p in built_files(out)}
    manifest = {
        "tool": "gnnca data dropped",
        "from": {"built": str(built), "manifest_sha256": file_info(built / "manifest.json")["sha256"]},
        "source": screened.manifest.get("source") or "bundled data/",  # as the build names it: no machine path
        "seed": seed,
        "limit": limit,
        "max_added": max_added,
        "roles_only": roles_only,
        "convention": "chemist",
        "coef_set": list(S_IN),
        "counts": counts,
        "seconds": {"screen": round(t_screen, 1), "close": round(t_close, 1)},
        "files": files,
    }
    atomic_write_json(out / "manifest.json", manifest)
    return manifest


def _write_lines(
    out: Path, records: list[dict[str, Any]], seed: int, roles_only: bool
) -> tuple[dict[str, int], dict[str, int]]:
    """The Type-1 variant and the interleaved Type-1/Type-2 variant of each representation; line counts per
    variant and the Type-2 lines not written per variant."""
    lines: dict[str, int] = {}
    skipped: dict[str, int] = {}
    for r, repr in REPRS.items():
        t1_rows, mixed_rows, n_skip = [], [], 0
        for rec in records:
            name = rec["formulas"] if repr == "formula" else None
            extra = {"convention": "chemist", "source": rec["source"], "mapped": bool(rec["mapped"])}
            if roles_only:
                extra["roles_only"] = True
            k = random.Random(f"{seed}/dropped/k/{rec['id']}").choice(S_IN)
            src, tgt, meta = chemist_line(rec, k, random.Random(f"{seed}/dropped/t1/{rec['id']}"), name)
            meta = {k_: v for k_, v in meta.items() if k_ not in ("mit_split", "mit_index")} | extra
            row = (src, tgt, json.dumps(meta, separators=(",", ":")))
            t1_rows.append(row)
            mixed_rows.append(row)
            if not written_names_distinct(rec, name):
                n_skip += 1
                continue
            src, tgt, meta = type2_line(rec, S_IN, random.Random(f"{seed}/dropped/t2/{rec['id']}"), name)
            mixed_rows.append((src, tgt, json.dumps(meta | extra, separators=(",", ":"))))
        for t, rows in ((1, t1_rows), (2, mixed_rows)):
            variant = f"ChemAlgebra_{r}_T{t}_x1"
            for col, kind in enumerate(("src", "tgt", "meta")):
                suffix = "jsonl" if kind == "meta" else "txt"
                atomic_write_lines(out / variant / f"{kind}-train.{suffix}", (row[col] for row in rows))
            lines[variant] = len(rows)
        skipped[f"ChemAlgebra_{r}_T2_x1"] = n_skip
    return lines, skipped
