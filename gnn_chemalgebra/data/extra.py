"""Extra *training* reactions for ``gnnca data build --extra``: USPTO-500-MT and USPTO-full (val + test).

Order of work, so that no benchmark valid/test reaction can reach training:

1. read every row (malformed rows are dropped with a reason);
2. **before anything else**, remove every reaction whose product (canonical SMILES, atom maps and stereo
   removed) equals a product molecule of *any* USPTO-MIT valid or test reaction (all 70,000 lines, kept or
   not: the Molecular Transformer target molecules and the molecules of the atom-mapped product side);
3. remove duplicates (same canonical reactants and products, reagents ignored), first within the extra data
   (first occurrence kept: USPTO-500-MT before USPTO-full, file order) and against the local training
   reactions;
4. apply the USPTO-BAL rules of the benchmark's own lines (:func:`uspto.balance_separated`);
5. USPTO-full only: the reaction is reversed to the forward direction, reactant atoms without a map number
   (leaving groups) get fresh numbers, and the bond edits read from the maps must reproduce the recorded
   product exactly (:func:`chem.edits.check_record`); otherwise the reaction is dropped with the cause.

Every step is counted per source (read, dropped by reason, overlap, duplicates, kept) for the manifest.
"""

from __future__ import annotations

import csv
import gzip
import lzma
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing import Pool
from pathlib import Path
from typing import Any

from rdkit import Chem
from tqdm import tqdm

from ..chem.edits import BOND_CLASSES, check_record
from ..errors import InputError
from .uspto import (
    ATOM_MAP,
    SKIP_MALFORMED,
    SKIP_NO_REACTANT,
    SKIP_UNPARSABLE_PRODUCT,
    SKIP_UNPARSABLE_REACTANTS,
    balance_separated,
    canonical_fragment,
)

SOURCE_500MT = "uspto_500_mt"
SOURCE_FULL = "uspto_full"
SOURCES: tuple[str, ...] = (SOURCE_500MT, SOURCE_FULL)
# Files inside the data folder, in reading order (which decides the first occurrence of a duplicate).
SOURCE_FILES: tuple[tuple[str, str, str], ...] = (
    (SOURCE_500MT, "uspto_500_mt", "uspto_500.csv"),
    (SOURCE_FULL, "uspto_full_gln_valtest", "uspto_valT.csv"),
    (SOURCE_FULL, "uspto_full_gln_valtest", "uspto_testT.csv"),
)
SKIP_UNPARSABLE_REAGENTS = "unparsable_reagents"
SKIP_RDKIT_ERROR = "rdkit_error"
REMOVED_OVERLAP = "overlap_mit_valid_test_product"
REMOVED_DUP_EXTRA = "duplicate_within_extra"
REMOVED_DUP_LOCAL = "duplicate_of_local_train"
MAP_PREFIX = "map_"  # dropped because the atom map is broken: map_<cause of chem.edits>
_PROC_ORDER = {"none": "0.0", "single": "1.0", "double": "2.0", "triple": "3.0", "aromatic": "1.5"}


@dataclass(frozen=True)
class ExtraRaw:
    """One row of an extra source, already in the forward direction (``reactants`` may carry atom maps)."""

    source: str
    split: str
    line: int  # 1-based line in the file (the header is line 1)
    reactants: str
    reagents: str
    product: str


def _open(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    if path.suffix == ".xz":
        return lzma.open(path, "rt", encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def _find(folder: Path, stem: str) -> Path | None:
    """``stem``, ``stem.gz`` or ``stem.xz`` inside ``folder``, whichever exists."""
    return next((p for p in (folder / stem, folder / f"{stem}.gz", folder / f"{stem}.xz") if p.exists()), None)


def read_extra(src_dir: Path, limit: int | None = None) -> tuple[list[ExtraRaw], list[tuple[ExtraRaw, str]]]:
    """Every row of the extra sources in reading order, and the malformed rows with what is wrong."""
    rows: list[ExtraRaw] = []
    bad: list[tuple[ExtraRaw, str]] = []
    for source, folder, stem in SOURCE_FILES:
        path = _find(src_dir / folder, stem)
        if path is None:
            raise InputError(f"--extra needs {folder}/{stem}[.gz|.xz] (see data/README.md)", path=str(src_dir))
        split_of_file = "val" if "valT" in stem else "test" if "testT" in stem else None
        with _open(path) as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            want = ["rxn", "reagent", "split"] if source == SOURCE_500MT else ["input", "target"]
            if header is None or header[: len(want)] != want:
                raise InputError(f"expected the CSV header {','.join(want)}", path=str(path), line=1)
            for k, cells in enumerate(reader):
                if limit is not None and k >= limit:
                    break
                line = k + 2
                if source == SOURCE_500MT:
                    rxn, reagents, split = (cells + ["", "", ""])[:3]
                    lhs, arrow, rhs = rxn.partition(">>")
                    raw = ExtraRaw(source, split or "?", line, lhs, reagents, rhs)
                    ok = bool(arrow and lhs and rhs and len(cells) == 3)
                else:  # written product -> reactants: reverse it
                    product, reactants = (cells + ["", ""])[:2]
                    raw = ExtraRaw(source, split_of_file or "?", line, reactants, "", product)
                    ok = bool(product and reactants and len(cells) == 2)
                (rows.append(raw) if ok else bad.append((raw, f"expected {len(want)} non-empty CSV fields")))
    return rows, bad


def product_key(mol: Chem.Mol) -> str:
    """The overlap key of a molecule: canonical SMILES without atom maps, stereo or isotopes."""
    m = Chem.Mol(mol)
    for a in m.GetAtoms():
        a.SetAtomMapNum(0)
    Chem.RemoveStereochemistry(m)
    return Chem.MolToSmiles(m, isomericSmiles=False)


def _canon_str(smiles: str) -> str | None:
    """Canonical SMILES without maps, as USPTO-MIT's fragments get it (cached per worker)."""
    return canonical_fragment(smiles) if smiles else None


def mit_product_keys_of(line: str) -> list[str]:
    """Overlap keys of every product molecule on one MIT line (a target line, or the product side)."""
    out = []
    for frag in line.split("."):
        try:
            mol = Chem.MolFromSmiles(frag) if frag else None
            out.append(product_key(mol) if mol is not None else ATOM_MAP.sub("]", frag))
        except Exception:  # noqa: BLE001 - keep the raw string as its key
            out.append(ATOM_MAP.sub("]", frag))
    return out


def prepare(raw: ExtraRaw) -> dict[str, Any]:
    """Pass 1 (workers): canonical molecules, the separation into reactants/reagents, the overlap keys.

    USPTO-500-MT names its reactants; in USPTO-full a reactant is a molecule with an atom map that appears
    in the product (the USPTO-MIT rule), the others are reagents. Never raises: an RDKit failure on an odd
    molecule drops the row with the reason ``rdkit_error``.
    """
    try:
        return _prepare(raw)
    except Exception as exc:  # noqa: BLE001 - one odd row must not stop a build of 336k
        return {"reason": SKIP_RDKIT_ERROR, "detail": f"{type(exc).__name__}: {exc}"[:300]}


def _prepare(raw: ExtraRaw) -> dict[str, Any]:
    products, keys = [], []
    for frag in raw.product.split("."):
        can = _canon_str(frag)
        if can is None:
            return {"reason": SKIP_UNPARSABLE_PRODUCT, "detail": frag}
        products.append(can)
        keys.append(product_key(Chem.MolFromSmiles(can)))
    out: dict[str, Any] = {"keys": keys, "products": products}
    product_maps = set(ATOM_MAP.findall(raw.product))
    reactants, reagents = [], []
    for frag in raw.reactants.split("."):
        can = _canon_str(frag)
        if can is None:
            return {**out, "reason": SKIP_UNPARSABLE_REACTANTS, "detail": frag}
        is_reactant = raw.source == SOURCE_500MT or bool(product_maps.intersection(ATOM_MAP.findall(frag)))
        (reactants if is_reactant else reagents).append(can)
    for frag in raw.reagents.split(".") if raw.reagents else []:
        can = _canon_str(frag)
        if can is None:
            return {**out, "reason": SKIP_UNPARSABLE_REAGENTS, "detail": frag}
        reagents.append(can)
    if not reactants:
        return {**out, "reason": SKIP_NO_REACTANT, "detail": "no molecule maps into the product"}
    out.update(reactants=reactants, reagents=reagents, key=dedup_key(reactants, products))
    return out


def dedup_key(reactants: Iterable[str], products: Iterable[str]) -> str:
    """Same reaction = same canonical reactants and products as multisets (reagents ignored)."""
    return ".".join(sorted(reactants)) + ">>" + ".".join(sorted(products))


def forward_mapped(lhs_fragments: list[str], product: str) -> str:
    """``reactants>>product`` with a fresh map number on every unmapped reactant atom (a leaving group).

    The edit labels break bonds between product atoms and atoms absent from the product only when both ends
    are mapped, as in the fully mapped USPTO-MIT (rexgen) reactions.
    """
    used = [int(m) for m in ATOM_MAP.findall(product)] + [int(m) for f in lhs_fragments for m in ATOM_MAP.findall(f)]
    nxt = max(used, default=0) + 1
    out = []
    for frag in lhs_fragments:
        mol = Chem.MolFromSmiles(frag)
        for a in mol.GetAtoms():
            if not a.GetAtomMapNum():
                a.SetAtomMapNum(nxt)
                nxt += 1
        out.append(Chem.MolToSmiles(mol))
    return ".".join(out) + ">>" + product


def finish(item: tuple[ExtraRaw, dict[str, Any]]) -> dict[str, Any]:
    """Pass 2 (workers): USPTO-BAL rules, then (USPTO-full) the edits from the maps must give the product."""
    try:
        return _finish(*item)
    except Exception as exc:  # noqa: BLE001 - as in prepare()
        return {"ok": False, "reason": SKIP_RDKIT_ERROR, "detail": f"{type(exc).__name__}: {exc}"[:300]}


def _finish(raw: ExtraRaw, prep: dict[str, Any]) -> dict[str, Any]:
    reactants, reagents, products = list(prep["reactants"]), list(prep["reagents"]), list(prep["products"])
    res = balance_separated({}, reactants, reagents, products)
    if not res["ok"]:
        return res
    rec = {
        "id": -1,
        "mit_split": None,
        "mit_index": None,
        **{k: res[k] for k in ("status", "reactants", "reagents", "products", "leftover_product")},
        "leftover_reactant": res["leftover_reactant"],
        "mapped": forward_mapped(raw.reactants.split("."), raw.product) if raw.source == SOURCE_FULL else None,
        "edits": None,
        "edits_proc": None,
        "formulas": res["formulas"],
        "source": {"set": raw.source, "split": raw.split, "line": raw.line},
    }
    if raw.source == SOURCE_FULL:
        cause, labels = check_record(rec)
        if cause or labels is None:
            return {"ok": False, "reason": MAP_PREFIX + (cause or "no_labels"), "detail": rec["mapped"]}
        pairs = [(labels.maps[i], labels.maps[j], BOND_CLASSES[c]) for i, j, c in labels.bonds]
        rec["edits"] = ";".join(f"{a}-{b}" for a, b, _ in pairs)
        rec["edits_proc"] = ";".join(f"{a}-{b}-{_PROC_ORDER[c]}" for a, b, c in pairs)
    return {"ok": True, "record": rec}


def map_rows(fn: Callable, items: list, workers: int, desc: str) -> Iterator:
    if workers <= 1 or len(items) < 2000:
        yield from tqdm(map(fn, items), total=len(items), desc=desc, unit="rxn", leave=False, mininterval=1.0)
        return
    with Pool(workers) as pool:
        it = pool.imap(fn, items, chunksize=512)
        yield from tqdm(it, total=len(items), desc=desc, unit="rxn", leave=False, mininterval=1.0)


def mit_product_keys(lines: Iterable[str], workers: int) -> set[str]:
    """The overlap keys of every product molecule of the given MIT lines."""
    keys: set[str] = set()
    for ks in map_rows(mit_product_keys_of, list(lines), workers, "MIT products"):
        keys.update(ks)
    return keys


def local_train_keys(records: Iterable[dict[str, Any]]) -> set[str]:
    """Dedup keys of USPTO-BAL training records (their leftover chains, appended last, left out)."""
    out = set()
    for r in records:
        reactants = r["reactants"][:-1] if r.get("leftover_reactant") is not None else r["reactants"]
        products = r["products"][:-1] if r.get("leftover_product") is not None else r["products"]
        out.add(dedup_key(reactants, products))
    return out


def build_extra(
    src_dir: Path,
    mit_keys: set[str],
    local_keys: set[str],
    *,
    workers: int,
    limit: int | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    """Kept extra records (ids not yet set), the per-source counts, and one TSV row per row not kept."""
    raws, bad = read_extra(src_dir, limit)
    counts = {s: {"read": 0, "dropped": Counter(), "overlap": 0, "duplicates": Counter(), "kept": 0} for s in SOURCES}
    skipped: list[str] = []

    def drop(raw: ExtraRaw, reason: str, detail: str = "") -> None:
        counts[raw.source]["dropped"][reason] += 1
        skipped.append(f"{raw.source}\t{raw.split}\t{raw.line}\t{reason}\t{detail}".replace("\n", " "))

    for raw, why in bad:
        counts[raw.source]["read"] += 1
        drop(raw, SKIP_MALFORMED, why)
    seen = set(local_keys)
    todo: list[tuple[ExtraRaw, dict[str, Any]]] = []
    for raw, prep in zip(raws, map_rows(prepare, raws, workers, "extra: prepare"), strict=True):
        c = counts[raw.source]
        c["read"] += 1
        if "keys" not in prep:  # unparsable product: no key to compare
            drop(raw, prep["reason"], prep["detail"])
            continue
        hit = next((k for k in prep["keys"] if k in mit_keys), None)
        if hit is not None:
            c["overlap"] += 1
            skipped.append(f"{raw.source}\t{raw.split}\t{raw.line}\t{REMOVED_OVERLAP}\t{hit}")
            continue
        if "reason" in prep:
            drop(raw, prep["reason"], prep["detail"])
            continue
        if prep["key"] in seen:
            why = REMOVED_DUP_LOCAL if prep["key"] in local_keys else REMOVED_DUP_EXTRA
            c["duplicates"][why] += 1
            skipped.append(f"{raw.source}\t{raw.split}\t{raw.line}\t{why}\t")
            continue
        seen.add(prep["key"])
        todo.append((raw, prep))
    kept: list[dict[str, Any]] = []
    for (raw, _), res in zip(todo, map_rows(finish, todo, workers, "extra: USPTO-BAL + maps"), strict=True):
        if res["ok"]:
            kept.append(res["record"])
            counts[raw.source]["kept"] += 1
        else:
            drop(raw, res["reason"], res.get("detail", ""))
    manifest = {
        s: {
            "read": c["read"],
            "dropped": dict(sorted(c["dropped"].items())),
            "removed_overlap": c["overlap"],
            "duplicates": {k: c["duplicates"][k] for k in (REMOVED_DUP_EXTRA, REMOVED_DUP_LOCAL)},
            "kept": c["kept"],
        }
        for s, c in counts.items()
    }
    return kept, manifest, skipped


def check_counts(extra: dict[str, Any]) -> list[str]:
    """Per source: read == dropped + overlap + duplicates + kept (used by ``verify``)."""
    problems = []
    for s, c in extra.get("sources", {}).items():
        total = sum(c["dropped"].values()) + c["removed_overlap"] + sum(c["duplicates"].values()) + c["kept"]
        if total != c["read"]:
            problems.append(f"manifest extra/{s}: {c['read']} read but {total} accounted for")
    return problems
