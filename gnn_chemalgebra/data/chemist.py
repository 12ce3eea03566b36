"""``gnnca data chemist``: the chemist's-convention sets, built beside a benchmark build and never inside it.

The benchmark keeps a USPTO-MIT reaction only when the atoms one side has beyond the other form a chain of bracket
atoms that RDKit accepts (:func:`uspto.balance_separated`); more than half of the valid and test reactions fail that
test (``leftover_rejected_by_rdkit`` in ``skipped.tsv``), among them most of everyday chemistry (amide couplings,
ester hydrolyses, deprotections). They are never trained on, so, balanced with real by-products (water, HCl, CO2,
alcohols, salts) where the atoms allow, they make a validation and a test set written as a chemist writes them.

``gnnca data chemist BUILT --out OUT`` reads ``BUILT/skipped.tsv`` and the source reactions ``BUILT`` was built
from, and writes (``BUILT`` is only read)::

    OUT/manifest.json                  counts per split (dropped, balanced, not balanced by reason), by-products,
                                       every file's line count and sha256
    OUT/reactions-{valid,test}.jsonl   one balanced reaction per line (SMILES, coefficients, formulas, atom map)
    OUT/unbalanced.tsv                 mit_split, mit_index, reason -- one row per reaction not balanced
    OUT/{smiles,formula}/src-{valid,test}.txt, tgt-{valid,test}.txt, meta-{valid,test}.jsonl   Type-1 lines
                                       (:mod:`.chemist_lines`), line i of each file = reaction i of reactions-*.jsonl

The reactants are the molecules that map into the product (the benchmark's separation); the reagents stay as they
are written and are never consumed. Deterministic for a seed: ``k`` of line i is drawn per split, so the SMILES
and formula lines i are the same reaction with the same extent.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..algebra.extent import S_IN
from ..errors import InputError
from ..io import atomic_write_json, atomic_write_lines
from .byproduct_close import MAX_ADDED, close_sides
from .chemist_lines import chemist_line
from .uspto import (
    SKIP_LEFTOVER_REJECTED,
    SKIP_RECHECK,
    RawReaction,
    formula_of,
    read_split,
    separate_and_balance,
)

RULE_DROPS = (SKIP_LEFTOVER_REJECTED, SKIP_RECHECK)  # the leftover rule's reasons in skipped.tsv
SPLITS = ("test", "valid")  # USPTO-MIT splits that are never trained on (the local training split is kept MIT valid)
REPRS = {"smiles": "smiles", "formula": "formula"}  # representation -> folder
SEPARATION_CHANGED = "not_dropped_on_rebuild"  # the source disagrees with skipped.tsv (another source or version)


def rule_dropped(built: Path) -> dict[str, list[int]]:
    """Per MIT valid/test split, the 0-based line numbers that ``built/skipped.tsv`` lists as dropped by the leftover
    rule, in file order."""
    path = built / "skipped.tsv"
    if not path.exists():
        raise InputError("no skipped.tsv (not a gnnca data build folder)", path=str(path))
    out: dict[str, list[int]] = {s: [] for s in SPLITS}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            cells = line.rstrip("\n").split("\t")
            if n == 1:
                if cells[:3] != ["mit_split", "mit_index", "reason"]:
                    raise InputError("expected the header mit_split, mit_index, reason, detail", path=str(path), line=1)
                continue
            if len(cells) < 3 or not cells[1].isdigit():
                raise InputError("expected mit_split, a line index and a reason", path=str(path), line=n)
            if cells[0] in out and cells[2] in RULE_DROPS:
                out[cells[0]].append(int(cells[1]))
    return out


def separated(raw: RawReaction) -> tuple[list[str], list[str], list[str]] | None:
    """The benchmark's separation of a reaction the rule drops: ``(reactants, reagents, products)`` as canonical
    SMILES, or ``None`` when the builder would keep it or cannot read it (then it is not a rule drop)."""
    res = separate_and_balance(raw)
    if res["ok"] or res.get("reason") not in RULE_DROPS:
        return None
    lhs, _, rhs = res["separated_src"].partition(">")
    return lhs.split("."), [m for m in rhs.split(".") if m], res["separated_tgt"].split(".")


def close_reaction(raw: RawReaction, max_added: int = MAX_ADDED) -> dict[str, Any]:
    """Separate one dropped reaction and close it with real by-products (runs in a worker).

    ``{"ok": True, reactants, reagents, products, byproducts, coefficients}`` or ``{"ok": False, reason}``.
    Repeated reactant or product molecules are one species (the closure sets their coefficients)."""
    sides = separated(raw)
    if sides is None:
        return {"ok": False, "reason": SEPARATION_CHANGED}
    return close_sides(sides[0], sides[1], sides[2], max_added)  # reagents as written: a salt's ions stay repeated


def build_chemist(
    built: str | Path,
    out: str | Path,
    *,
    source: str | Path | None = None,
    seed: int = 0,
    workers: int = 1,
    max_added: int = MAX_ADDED,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Write ``out`` (see the module docstring) from the build in ``built`` and return its manifest."""
    from .build import bundled_data_dir, read_build_manifest
    from .extra import map_rows, mit_product_keys_of
    from .manifest import built_files as _built_files
    from .manifest import file_info

    built, out = Path(built), Path(out)
    bmanifest = read_build_manifest(built)
    if out.resolve() == built.resolve() or built.resolve() in out.resolve().parents:
        raise InputError("--out must be outside the benchmark folder (its files stay as built)", path=str(out))
    if source is None:
        source = bmanifest.get("source")
    named = source not in (None, "bundled data/")  # the build's manifest names the bundled folder so
    src_dir = Path(source) if named else bundled_data_dir()
    dropped = rule_dropped(built)
    train_keys = _train_product_keys(built)

    counts: dict[str, Any] = {}
    unbalanced = ["mit_split\tmit_index\treason"]
    out.mkdir(parents=True, exist_ok=True)
    for split in SPLITS:
        wanted = set(dropped[split])
        raws = [r for r in read_split(src_dir, split, bmanifest.get("limit")) if r.index in wanted]
        if len(raws) != len(wanted):
            raise InputError(
                f"skipped.tsv lists {len(wanted):,} {split} reactions dropped by the rule, the source has "
                f"{len(raws):,} of those lines (built from another source? give --source)",
                path=str(src_dir),
            )
        reasons: Counter = Counter()
        byproducts: Counter = Counter()
        records: list[dict[str, Any]] = []
        results = map_rows(_close_item, [(r, max_added) for r in raws], workers, f"chemist {split}")
        for raw, res in zip(raws, results, strict=True):
            if not res["ok"]:
                reasons[res["reason"]] += 1
                unbalanced.append(f"{split}\t{raw.index}\t{res['reason']}")
                continue
            res.pop("ok")
            rec = {"id": len(records), "mit_split": split, "mit_index": raw.index, **res, "mapped": raw.mapped}
            rec["formulas"] = {m: formula_of(m) for m in dict.fromkeys(_species(rec))}
            byproducts.update(rec["byproducts"])
            records.append(rec)
        if reasons.get(SEPARATION_CHANGED):
            raise InputError(
                f"{reasons[SEPARATION_CHANGED]:,} {split} reactions listed as dropped are kept or unreadable when "
                "separated again (built from another source or version? give --source)",
                path=str(src_dir),
            )
        _write_split(out, split, records, seed)
        share = sum(1 for r in records if any(k in train_keys for p in r["products"] for k in mit_product_keys_of(p)))
        counts[split] = {
            "dropped_by_rule": len(raws),
            "balanced": len(records),
            "not_balanced": dict(reasons.most_common()),
            "byproducts": dict(byproducts.most_common()),
            "share_a_product_with_training": share,
        }
        log(f"chemist {split}: {len(records):,} of {len(raws):,} balanced; not: {dict(reasons.most_common())}")
    atomic_write_lines(out / "unbalanced.tsv", unbalanced)
    files = {p.relative_to(out).as_posix(): file_info(p) for p in _built_files(out)}
    manifest = {
        "tool": "gnnca data chemist",
        "from": {"built": str(built), "manifest_sha256": file_info(built / "manifest.json")["sha256"]},
        "source": str(src_dir) if named else "bundled data/",
        "seed": seed,
        "max_added": max_added,
        "line_type": 1,
        "coef_set": list(S_IN),
        "counts": counts,
        "files": files,
    }
    atomic_write_json(out / "manifest.json", manifest)
    return manifest


def _close_item(item: tuple[RawReaction, int]) -> dict[str, Any]:
    return close_reaction(*item)


def _species(rec: dict[str, Any]) -> list[str]:
    return [*rec["reactants"], *rec["reagents"], *rec["products"], *rec["byproducts"]]


def _train_product_keys(built: Path) -> set[str]:
    """Overlap keys of the products of the build's training reactions (counted, not removed: the chemist sets are
    scored against the benchmark's own training data, as its test sets are)."""
    from .extra import mit_product_keys_of

    path = built / "uspto_bal" / "reactions-train.jsonl"
    if not path.exists():
        raise InputError("no uspto_bal/reactions-train.jsonl (not a gnnca data build folder)", path=str(built))
    keys: set[str] = set()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            prods = rec["products"][:-1] if rec.get("leftover_product") is not None else rec["products"]
            for p in prods:
                keys.update(mit_product_keys_of(p))
    return keys


def _write_split(out: Path, split: str, records: list[dict[str, Any]], seed: int) -> None:
    """``reactions-<split>.jsonl`` and the Type-1 lines of both representations (one extent per reaction)."""
    atomic_write_lines(out / f"reactions-{split}.jsonl", (json.dumps(r, separators=(",", ":")) for r in records))
    k_rng = random.Random(f"{seed}/chemist/{split}")
    ks = [k_rng.choice(S_IN) for _ in records]
    for repr, folder in REPRS.items():
        rng = random.Random(f"{seed}/chemist/{repr}/{split}")
        names = [r["formulas"] if repr == "formula" else None for r in records]
        rows = [chemist_line(r, k, rng, n) for r, k, n in zip(records, ks, names, strict=True)]
        d = out / folder
        atomic_write_lines(d / f"src-{split}.txt", (s for s, _, _ in rows))
        atomic_write_lines(d / f"tgt-{split}.txt", (t for _, t, _ in rows))
        atomic_write_lines(d / f"meta-{split}.jsonl", (json.dumps(m, separators=(",", ":")) for _, _, m in rows))
