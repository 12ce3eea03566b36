"""``gnnca data build``: USPTO-MIT -> separated form -> USPTO-BAL -> the eight ChemAlgebra variants.

Deterministic for a given seed (string-seeded ``random.Random`` per variant and split; results gathered in
input order from the worker pool), written atomically, with a manifest of counts and sha256 sums.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import platform
import random
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ..algebra.extent import S_IN, S_OUT
from ..errors import ChemAlgebraError, InputError
from ..io import atomic_write_json, atomic_write_lines, current_umask
from ..version import __version__
from .augment import BaseReaction, check_identity, draw_lines, draw_record, draw_type1, draw_type2
from .layout import VARIANTS, split_files, variant_props
from .manifest import built_files, file_info, verify  # noqa: F401  (verify: imported from here by callers)
from .uspto import (
    SKIP_LEFTOVER_REJECTED,
    RawReaction,
    find_source_file,
    process_reaction,
    read_split,
    separate_and_balance,
    with_sources,
)

# Paper Table 1 (USPTO-MIT split -> already balanced, re-balanced, kept).
PAPER_TABLE1: dict[str, dict[str, int]] = {
    "train": {"total": 409_035, "balanced": 18_815, "rebalanced": 162_220, "kept": 181_035},
    "valid": {"total": 30_000, "balanced": 1_292, "rebalanced": 11_868, "kept": 13_160},
    "test": {"total": 40_000, "balanced": 1_809, "rebalanced": 15_973, "kept": 17_782},
}
LOCAL_VALID_FRACTION = 0.1
X5_SPLITS = ("train", "train_cross")


# Said when no source reactions are found: where a user gets them
SOURCE_HINT = (
    "pass --source DIR, a folder laid out like data/ of the gnn-chemalgebra repository (uspto_mit_mapped/, "
    "uspto_mit_tgt/; its data/README.md names each upstream set: USPTO-MIT from connorcoley/rexgen_direct and "
    "CC-SXF/DataSet-USPTO), or install the wheel, which ships them"
)


def bundled_data_dir() -> Path:
    """The bundled source reactions: ``gnn_chemalgebra/source_data`` in an installed wheel (pyproject maps the
    repository's ``data/`` there), else the repository's ``data/`` (a clone or an editable install)."""
    package = Path(__file__).resolve().parents[1]
    packaged = package / "source_data"
    return packaged if packaged.is_dir() else package.parent / "data"


def read_build_manifest(built: Path) -> dict[str, Any]:
    """The manifest of a ``gnnca data build`` folder (missing or unreadable: one clear error)."""
    mpath = built / "manifest.json"
    if not mpath.is_file():
        raise InputError("no manifest.json (not a gnnca data build folder)", path=str(built))
    try:
        return json.loads(mpath.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise InputError("not a gnnca data build manifest (not JSON)", path=str(mpath)) from None


def build_source_dir(manifest: dict[str, Any]) -> Path:
    """The source folder a build read: the manifest's (the bundled data when it names the bundled folder, which
    moves with the install)."""
    source = manifest.get("source")
    return Path(source) if source not in (None, "bundled data/") else bundled_data_dir()


# The reactions of the split being processed: forked workers read them, so only index ranges travel to
# the workers, and only the records (without the source lines, re-attached here) travel back.
_RAWS: list[RawReaction] = []
CHUNKS_PER_WORKER = 8  # enough pieces that the last one does not leave a worker idle for long


def _process_range(bounds: tuple[int, int]) -> list[dict[str, Any]]:
    return [separate_and_balance(raw) for raw in _RAWS[bounds[0] : bounds[1]]]


def _process_all(raws: list[RawReaction], workers: int, desc: str) -> list[dict[str, Any]]:
    """``process_reaction`` over ``raws``, results in input order; ``workers`` > 1: forked processes that
    take contiguous chunks, each with its own molecule caches (inherited from this process when forked)."""
    bar = tqdm(total=len(raws), desc=desc, unit="rxn", leave=False, mininterval=1.0)
    out: list[dict[str, Any]] = []
    if workers <= 1 or len(raws) < 2 * workers:
        for raw in raws:
            out.append(process_reaction(raw))
            bar.update()
        bar.close()
        return out
    global _RAWS
    size = -(-len(raws) // (workers * CHUNKS_PER_WORKER))
    bounds = [(lo, min(lo + size, len(raws))) for lo in range(0, len(raws), size)]
    _RAWS = raws
    try:
        with mp.get_context("fork").Pool(workers) as pool:
            for lo_hi, part in zip(bounds, pool.imap(_process_range, bounds), strict=True):
                out.extend(with_sources(raw, res) for raw, res in zip(raws[lo_hi[0] : lo_hi[1]], part, strict=True))
                bar.update(len(part))
    finally:
        _RAWS = []
        bar.close()
    return out


def _versions() -> dict[str, str]:
    import numpy
    import rdkit

    return {
        "gnn_chemalgebra": __version__,
        "python": platform.python_version(),
        "rdkit": rdkit.__version__,
        "numpy": numpy.__version__,
    }


def _base_in_repr(rec: dict[str, Any], repr: str) -> BaseReaction:
    if repr == "smiles":
        return BaseReaction(tuple(rec["reactants"]), tuple(rec["reagents"]), tuple(rec["products"]))
    f = rec["formulas"]
    return BaseReaction(
        tuple(f[m] for m in rec["reactants"]),
        tuple(f[m] for m in rec["reagents"]),
        tuple(f[m] for m in rec["products"]),
    )


def split_local(kept: list[dict[str, Any]], seed: int) -> tuple[list[dict], list[dict]]:
    """Seeded 90/10 split of the reactions kept from MIT valid (local protocol); original order kept."""
    idx = list(range(len(kept)))
    random.Random(f"{seed}/local-holdout").shuffle(idx)
    n_valid = round(len(kept) * LOCAL_VALID_FRACTION)
    hold = set(idx[:n_valid])
    return [r for i, r in enumerate(kept) if i not in hold], [r for i, r in enumerate(kept) if i in hold]


def cross_halves(n: int, seed: int, name: str) -> list[str]:
    """Per base reaction, its training set in the cross task: a seeded half ``in``, the other half ``out``."""
    idx = list(range(n))
    random.Random(f"{seed}/cross/{name}").shuffle(idx)
    half = set(idx[: n // 2])
    return ["in" if i in half else "out" for i in range(n)]


def _variant_plan(bal: dict[str, list[dict]], seed: int, n_extra: int = 0) -> dict[str, tuple[str, list[str]]]:
    """For each variant split: which USPTO-BAL split it draws from and each reaction's coefficient set.

    A split uses the first ``len(sets)`` reactions of its USPTO-BAL split. The ``n_extra`` extra training
    reactions (``--extra``) come last in USPTO-BAL train: ``train`` and ``train_cross`` gain them (with their
    own seeded halves), ``test_cross`` keeps the local training reactions only, so it and every valid/test
    file stay byte-identical to the local build.
    """
    n_tr, n_va, n_te = len(bal["train"]) - n_extra, len(bal["valid"]), len(bal["test"])
    train_cross = cross_halves(n_tr, seed, "train")
    extra_cross = cross_halves(n_extra, seed, "extra") if n_extra else []
    valid_cross = cross_halves(n_va, seed, "valid")
    swap = {"in": "out", "out": "in"}
    return {
        "train": ("train", ["in"] * (n_tr + n_extra)),
        "valid": ("valid", ["in"] * n_va),
        "test_in": ("test", ["in"] * n_te),
        "test_out": ("test", ["out"] * n_te),
        "train_cross": ("train", train_cross + extra_cross),
        "valid_cross": ("valid", valid_cross),
        "test_cross": ("train", [swap[s] for s in train_cross]),
    }


def generate_lines(
    variant: str, split: str, bal_split: str, records: list[dict], sets: list[str], seed: int
) -> Iterator[tuple[str, str, str]]:
    props = variant_props(variant)
    draw = draw_type1 if props["type"] == 1 else draw_type2
    reps = props["x"] if split in X5_SPLITS else 1
    rng = random.Random(f"{seed}/{variant}/{split}")
    for rec, set_name in zip(records[: len(sets)], sets, strict=True):
        base = _base_in_repr(rec, str(props["repr"]))
        nu = base.nu()
        coef_set = S_IN if set_name == "in" else S_OUT
        for _ in range(reps):
            d = draw(base, coef_set, rng)
            if not check_identity(d, nu):  # pragma: no cover - a generator bug, never data
                raise ChemAlgebraError(f"{variant}/{split}: target != source + xi*nu for reaction {rec['id']}")
            src, tgt = draw_lines(d)
            meta = json.dumps(draw_record(d, rec["id"], bal_split, set_name, nu), separators=(",", ":"))
            yield src, tgt, meta


def _write_variant(out: Path, variant: str, bal: dict[str, list[dict]], seed: int, n_extra: int = 0) -> dict[str, int]:
    counts = {}
    for split, (bal_split, sets) in _variant_plan(bal, seed, n_extra).items():
        rows = generate_lines(variant, split, bal_split, bal[bal_split], sets, seed)
        counts[split] = write_columns(split_files(out, variant, split), rows)
    return counts


_SHARED: dict[str, Any] = {}  # what forked variant writers read instead of receiving it pickled


def _write_variants(
    out: Path, variants: list[str], bal: dict[str, list[dict]], seed: int, n_extra: int, workers: int
) -> dict[str, dict[str, int]]:
    """Each variant in its own process when workers allow (they are independent: own seeds, own files).

    The USPTO-BAL records reach the workers by fork, never pickled; only the variant name and its line
    counts cross the process boundary.
    """
    _SHARED.update(out=out, bal=bal, seed=seed, n_extra=n_extra)
    try:
        if workers <= 1 or len(variants) <= 1 or "fork" not in mp.get_all_start_methods():
            it: Iterable[tuple[str, dict[str, int]]] = map(_write_shared_variant, variants)
            return dict(tqdm(it, total=len(variants), desc="variants", unit="variant", leave=False))
        with mp.get_context("fork").Pool(min(workers, len(variants))) as pool:
            it = pool.imap(_write_shared_variant, variants)
            return dict(tqdm(it, total=len(variants), desc="variants", unit="variant", leave=False))
    finally:
        _SHARED.clear()


def _write_shared_variant(variant: str) -> tuple[str, dict[str, int]]:
    s = _SHARED
    return variant, _write_variant(s["out"], variant, s["bal"], s["seed"], s["n_extra"])


def write_columns(paths: tuple[Path, ...], rows: Iterable[tuple[str, ...]]) -> int:
    """Stream rows into one file per column (line i of each file = row i), each replaced atomically.

    Streaming keeps the memory of an x5 training split with the extra reactions (about 700k lines) flat.
    """
    tmps = []
    try:
        for p in paths:
            p.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
            os.fchmod(fd, 0o666 & ~current_umask())  # the user's usual mode, not mkstemp's 0600
            tmps.append((os.fdopen(fd, "wb"), tmp))
        n = 0
        for row in rows:
            for (fh, _), cell in zip(tmps, row, strict=True):
                fh.write(cell.encode("utf-8") + b"\n")
            n += 1
        for fh, _ in tmps:
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()
        for (_, tmp), p in zip(tmps, paths, strict=True):
            os.replace(tmp, p)
    except BaseException:
        for fh, tmp in tmps:
            fh.close()
            if os.path.exists(tmp):
                os.unlink(tmp)
        raise
    return n


def _bal_record(rec: dict[str, Any], new_id: int, mit_split: str) -> dict[str, Any]:
    keys = ("status", "reactants", "reagents", "products", "leftover_product", "leftover_reactant")
    out = {"id": new_id, "mit_split": mit_split, "mit_index": rec["mit_index"]}
    out.update({k: rec[k] for k in keys})
    out.update({k: rec[k] for k in ("mapped", "edits", "edits_proc", "formulas")})
    return out


def _bal_lines(rec: dict[str, Any]) -> tuple[str, str]:
    src = [f"{{1}}{m}" for m in (*rec["reactants"], *rec["reagents"])]
    tgt = [f"{{1}}{m}" for m in (*rec["products"], *rec["reagents"])]
    return ".".join(src), ".".join(tgt)


def build_all(
    out: str | Path,
    *,
    source: str | Path | None = None,
    seed: int = 0,
    workers: int = 0,
    limit: int | None = None,
    strict: bool = False,
    variants: Iterable[str] = VARIANTS,
    extra: bool = False,
    log=print,
) -> dict[str, Any]:
    """Build everything into ``out`` and return the manifest (also written to ``out/manifest.json``).

    ``extra``: add the extra training reactions of :mod:`.extra` (USPTO-500-MT, USPTO-full) to USPTO-BAL
    train; every other file is the same as without it.
    """
    out = Path(out)
    src_dir = _source_dir(source)
    workers = workers or os.cpu_count() or 1
    has_train = find_source_file(src_dir / "uspto_mit_mapped", "train.txt") is not None
    mit_splits = ["train", "valid", "test"] if has_train else ["valid", "test"]
    out.mkdir(parents=True, exist_ok=True)

    kept: dict[str, list[dict]] = {}
    counts: dict[str, dict[str, Any]] = {}
    skipped_rows: list[str] = []
    for split in mit_splits:
        kept[split], counts[split] = _separate_split(src_dir, split, out, workers, limit, strict, skipped_rows)
    atomic_write_lines(out / "skipped.tsv", ["mit_split\tmit_index\treason\tdetail", *skipped_rows])

    if has_train:
        bal_src = {
            "train": ("train", kept["train"]),
            "valid": ("valid", kept["valid"]),
            "test": ("test", kept["test"]),
        }
    else:
        tr, va = split_local(kept["valid"], seed)
        bal_src = {"train": ("valid", tr), "valid": ("valid", va), "test": ("test", kept["test"])}
    bal: dict[str, list[dict]] = {}
    extra_info: dict[str, Any] | None = None
    for bsplit, (mit_split, recs) in bal_src.items():
        bal[bsplit] = [_bal_record(r, i, mit_split) for i, r in enumerate(recs)]
        if extra and bsplit == "train":
            extra_info = _add_extra(out, src_dir, bal["train"], mit_splits, workers, limit)
        _write_bal_split(out / "uspto_bal", bsplit, bal[bsplit])

    n_extra = extra_info["train_reactions"]["extra"] if extra_info else 0
    variant_counts = _write_variants(out, list(variants), bal, seed, n_extra, workers)

    manifest = {
        "tool": "gnnca data build",
        "seed": seed,
        "protocol": "paper" if has_train else "local",
        "limit": limit,
        "source": str(src_dir) if source is not None else "bundled data/",
        "versions": _versions(),
        "uspto_bal": counts,
        "bal_splits": {k: {"from_mit": v[0], "reactions": len(v[1])} for k, v in bal_src.items()},
        "variants": variant_counts,
        "files": {p.relative_to(out).as_posix(): file_info(p) for p in built_files(out)},
    }
    if extra_info is not None:
        manifest["extra"] = extra_info
        manifest["bal_splits"]["train"]["reactions"] = len(bal["train"])
        manifest["bal_splits"]["train"]["extra_reactions"] = n_extra
    atomic_write_json(out / "manifest.json", manifest)
    log(format_counts_table(counts))
    if extra_info is not None:
        log(format_extra_table(extra_info))
    return manifest


def _source_dir(source: str | Path | None) -> Path:
    """The folder of the USPTO-MIT files (``--source``, else the bundled ones); one error line if it has none."""
    src_dir = Path(source) if source is not None else bundled_data_dir()
    if not (src_dir / "uspto_mit_mapped").is_dir():
        what = "source folder not found" if not src_dir.is_dir() else "no uspto_mit_mapped/ in the source folder"
        raise InputError(f"{what}: {SOURCE_HINT}", path=str(src_dir))
    return src_dir


def _separate_split(
    src_dir: Path, split: str, out: Path, workers: int, limit: int | None, strict: bool, skipped_rows: list[str]
) -> tuple[list[dict], dict[str, Any]]:
    """One USPTO-MIT split separated and balanced: writes its ``uspto_mit_separated`` files, appends a row per
    skipped reaction to ``skipped_rows`` (``strict``: the first one not dropped by the leftover rule stops the
    build) and returns the kept reactions with the split's counts (Table 1)."""
    raws = read_split(src_dir, split, limit)
    results = _process_all(raws, workers, f"USPTO-MIT {split}")
    reasons: Counter = Counter()
    sep_src, sep_tgt, ok = [], [], []
    for raw, res in zip(raws, results, strict=True):
        if "separated_src" in res:
            sep_src.append(res["separated_src"])
            sep_tgt.append(res["separated_tgt"])
        if res["ok"]:
            ok.append(res)
            continue
        reasons[res["reason"]] += 1
        if strict and res["reason"] != SKIP_LEFTOVER_REJECTED:
            raise InputError(
                f"{res['reason']}: {res['detail']}",
                path=f"{src_dir}/uspto_mit_mapped/{split}.txt",
                line=raw.index + 1,
            )
        detail = str(res.get("detail", "")).replace("\t", " ")
        skipped_rows.append(f"{split}\t{res['mit_index']}\t{res['reason']}\t{detail}")
    sep_dir = out / "uspto_mit_separated"
    atomic_write_lines(sep_dir / f"src-{split}.txt", sep_src)
    atomic_write_lines(sep_dir / f"tgt-{split}.txt", sep_tgt)
    status = Counter(r["status"] for r in ok)
    counts = {
        "total": len(raws),
        "balanced": status["balanced"],
        "rebalanced": status["rebalanced"],
        "kept": len(ok),
        "skipped": dict(sorted(reasons.items())),
        "paper": PAPER_TABLE1[split],
    }
    return ok, counts


def _write_bal_split(bal_dir: Path, bsplit: str, records: list[dict]) -> None:
    """A USPTO-BAL split's files: source and target lines (every coefficient 1) and the reactions as JSON lines."""
    lines = [_bal_lines(r) for r in records]
    atomic_write_lines(bal_dir / f"src-{bsplit}.txt", (s for s, _ in lines))
    atomic_write_lines(bal_dir / f"tgt-{bsplit}.txt", (t for _, t in lines))
    atomic_write_lines(bal_dir / f"reactions-{bsplit}.jsonl", (json.dumps(r, separators=(",", ":")) for r in records))


def _add_extra(
    out: Path, src_dir: Path, train: list[dict], mit_splits: list[str], workers: int, limit: int | None
) -> dict[str, Any]:
    """Append the extra training reactions to ``train`` (ids continue) and write ``extra_skipped.tsv``.

    The overlap keys come from every line of every MIT split except train (all 70,000 valid and test
    reactions under the local protocol, kept or not): the target molecules and the mapped product molecules.
    """
    from .extra import build_extra, local_train_keys, mit_product_keys

    lines: list[str] = []
    for split in (s for s in mit_splits if s != "train"):
        for raw in read_split(src_dir, split, None):
            lines.append(raw.target)
            lines.append(raw.mapped.split(">")[-1])
    mit_keys = mit_product_keys(lines, workers)
    kept, per_source, skipped = build_extra(src_dir, mit_keys, local_train_keys(train), workers=workers, limit=limit)
    n_local = len(train)
    for i, rec in enumerate(kept):
        rec["id"] = n_local + i
    train.extend(kept)
    atomic_write_lines(out / "extra_skipped.tsv", ["source\tsplit\tline\treason\tdetail", *skipped])
    return {
        "sources": per_source,
        "mit_valid_test_lines": len(lines) // 2,
        "mit_product_keys": len(mit_keys),
        "train_reactions": {"local": n_local, "extra": len(kept)},
    }


def format_extra_table(extra: dict[str, Any]) -> str:
    """Per extra source: read, dropped, overlap with MIT valid/test, duplicates, kept."""
    rows = ["| source | read | dropped | overlap removed | duplicates | kept |", "|---|---|---|---|---|---|"]
    for s, c in extra["sources"].items():
        rows.append(
            f"| {s} | {c['read']:,} | {sum(c['dropped'].values()):,} | {c['removed_overlap']:,} | "
            f"{sum(c['duplicates'].values()):,} | {c['kept']:,} |"
        )
    return "\n".join(rows)


def format_counts_table(counts: dict[str, dict[str, Any]]) -> str:
    """Our USPTO-BAL counts beside the paper's Table 1, with the relative difference of the kept count."""
    head = "| split | USPTO-MIT | balanced (paper) | re-balanced (paper) | kept (paper) | kept diff |"
    rows = [head, "|---|---|---|---|---|---|"]
    for split, c in counts.items():
        p = c["paper"]
        diff = ""
        if c["total"] == p["total"]:
            diff = f"{100.0 * (c['kept'] - p['kept']) / p['kept']:+.2f}%"
        rows.append(
            f"| {split} | {c['total']:,} | {c['balanced']:,} ({p['balanced']:,}) | "
            f"{c['rebalanced']:,} ({p['rebalanced']:,}) | {c['kept']:,} ({p['kept']:,}) | {diff} |"
        )
    return "\n".join(rows)
