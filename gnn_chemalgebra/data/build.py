"""``gnnca data build``: USPTO-MIT -> separated form -> USPTO-BAL -> the eight ChemAlgebra variants.

Deterministic for a given seed (string-seeded ``random.Random`` per variant and split; results gathered in
input order from the worker pool), written atomically, with a manifest of counts and sha256 sums.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import random
from collections import Counter
from collections.abc import Iterable, Iterator
from multiprocessing import Pool
from pathlib import Path
from typing import Any

from tqdm import tqdm

from .. import __version__
from ..errors import ChemAlgebraError, InputError
from ..io import atomic_write_json, atomic_write_lines
from .augment import BaseReaction, check_identity, draw_lines, draw_record, draw_type1, draw_type2
from .layout import S_IN, S_OUT, VARIANTS, variant_props
from .uspto import SKIP_LEFTOVER_REJECTED, RawReaction, find_source_file, process_reaction, read_split

# Paper Table 1 (USPTO-MIT split -> already balanced, re-balanced, kept).
PAPER_TABLE1: dict[str, dict[str, int]] = {
    "train": {"total": 409_035, "balanced": 18_815, "rebalanced": 162_220, "kept": 181_035},
    "valid": {"total": 30_000, "balanced": 1_292, "rebalanced": 11_868, "kept": 13_160},
    "test": {"total": 40_000, "balanced": 1_809, "rebalanced": 15_973, "kept": 17_782},
}
LOCAL_VALID_FRACTION = 0.1
X5_SPLITS = ("train", "train_cross")


def bundled_data_dir() -> Path:
    """The repository's ``data/`` folder (works from a clone or an editable install)."""
    return Path(__file__).resolve().parents[2] / "data"


def _process_all(raws: list[RawReaction], workers: int, desc: str) -> list[dict[str, Any]]:
    if workers <= 1:
        it: Iterable[dict[str, Any]] = map(process_reaction, raws)
        return list(tqdm(it, total=len(raws), desc=desc, unit="rxn", leave=False, mininterval=1.0))
    with Pool(workers) as pool:
        it = pool.imap(process_reaction, raws, chunksize=256)
        return list(tqdm(it, total=len(raws), desc=desc, unit="rxn", leave=False, mininterval=1.0))


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


def _variant_plan(bal: dict[str, list[dict]], seed: int) -> dict[str, tuple[str, list[str]]]:
    """For each variant split: which USPTO-BAL split it draws from and each reaction's coefficient set."""
    n_tr, n_va, n_te = len(bal["train"]), len(bal["valid"]), len(bal["test"])
    train_cross = cross_halves(n_tr, seed, "train")
    valid_cross = cross_halves(n_va, seed, "valid")
    swap = {"in": "out", "out": "in"}
    return {
        "train": ("train", ["in"] * n_tr),
        "valid": ("valid", ["in"] * n_va),
        "test_in": ("test", ["in"] * n_te),
        "test_out": ("test", ["out"] * n_te),
        "train_cross": ("train", train_cross),
        "valid_cross": ("valid", valid_cross),
        "test_cross": ("train", [swap[s] for s in train_cross]),
    }


def _generate(
    variant: str, split: str, bal_split: str, records: list[dict], sets: list[str], seed: int
) -> Iterator[tuple[str, str, str]]:
    props = variant_props(variant)
    draw = draw_type1 if props["type"] == 1 else draw_type2
    reps = props["x"] if split in X5_SPLITS else 1
    rng = random.Random(f"{seed}/{variant}/{split}")
    for rec, set_name in zip(records, sets, strict=True):
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


def _write_variant(out: Path, variant: str, bal: dict[str, list[dict]], seed: int) -> dict[str, int]:
    counts = {}
    for split, (bal_split, sets) in _variant_plan(bal, seed).items():
        rows = list(_generate(variant, split, bal_split, bal[bal_split], sets, seed))
        d = out / variant
        atomic_write_lines(d / f"src-{split}.txt", (r[0] for r in rows))
        atomic_write_lines(d / f"tgt-{split}.txt", (r[1] for r in rows))
        atomic_write_lines(d / f"meta-{split}.jsonl", (r[2] for r in rows))
        counts[split] = len(rows)
    return counts


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
    log=print,
) -> dict[str, Any]:
    """Build everything into ``out`` and return the manifest (also written to ``out/manifest.json``)."""
    out = Path(out)
    src_dir = Path(source) if source is not None else bundled_data_dir()
    workers = workers or os.cpu_count() or 1
    has_train = find_source_file(src_dir / "uspto_mit_mapped", "train.txt") is not None
    protocol = "paper" if has_train else "local"
    mit_splits = ["train", "valid", "test"] if has_train else ["valid", "test"]
    out.mkdir(parents=True, exist_ok=True)

    kept: dict[str, list[dict]] = {}
    counts: dict[str, dict[str, Any]] = {}
    skipped_rows: list[str] = []
    sep_dir = out / "uspto_mit_separated"
    for split in mit_splits:
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
        atomic_write_lines(sep_dir / f"src-{split}.txt", sep_src)
        atomic_write_lines(sep_dir / f"tgt-{split}.txt", sep_tgt)
        status = Counter(r["status"] for r in ok)
        counts[split] = {
            "total": len(raws),
            "balanced": status["balanced"],
            "rebalanced": status["rebalanced"],
            "kept": len(ok),
            "skipped": dict(sorted(reasons.items())),
            "paper": PAPER_TABLE1[split],
        }
        kept[split] = ok
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
    bal_dir = out / "uspto_bal"
    for bsplit, (mit_split, recs) in bal_src.items():
        bal[bsplit] = [_bal_record(r, i, mit_split) for i, r in enumerate(recs)]
        lines = [_bal_lines(r) for r in bal[bsplit]]
        atomic_write_lines(bal_dir / f"src-{bsplit}.txt", (s for s, _ in lines))
        atomic_write_lines(bal_dir / f"tgt-{bsplit}.txt", (t for _, t in lines))
        atomic_write_lines(
            bal_dir / f"reactions-{bsplit}.jsonl", (json.dumps(r, separators=(",", ":")) for r in bal[bsplit])
        )

    variant_counts = {}
    for variant in tqdm(list(variants), desc="variants", unit="variant", leave=False):
        variant_counts[variant] = _write_variant(out, variant, bal, seed)

    files = {p.relative_to(out).as_posix(): file_info(p) for p in _built_files(out)}
    manifest = {
        "tool": "gnnca data build",
        "seed": seed,
        "protocol": protocol,
        "limit": limit,
        "source": str(src_dir) if source is not None else "bundled data/",
        "versions": _versions(),
        "uspto_bal": counts,
        "bal_splits": {k: {"from_mit": v[0], "reactions": len(v[1])} for k, v in bal_src.items()},
        "variants": variant_counts,
        "files": files,
    }
    atomic_write_json(out / "manifest.json", manifest)
    log(format_counts_table(counts))
    return manifest


def _built_files(out: Path) -> list[Path]:
    """Every file the manifest covers: all but the manifest itself and hidden (temporary) files."""
    return sorted(p for p in out.rglob("*") if p.is_file() and p.name != "manifest.json" and not p.name.startswith("."))


def file_info(path: Path) -> dict[str, Any]:
    """Line count and sha256 in one read of the file (used by the manifest and by ``verify``)."""
    h = hashlib.sha256()
    n_lines = 0
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
            n_lines += block.count(b"\n")
    if path.stat().st_size and not _ends_with_newline(path):
        n_lines += 1  # a last line without its newline still counts, as iterating the file would
    return {"lines": n_lines, "sha256": h.hexdigest()}


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as fh:
        fh.seek(-1, 2)
        return fh.read(1) == b"\n"


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


def verify(out: str | Path) -> list[str]:
    """Re-check a built folder against its manifest; returns one message per mismatch (empty = all good)."""
    out = Path(out)
    mpath = out / "manifest.json"
    if not mpath.exists():
        raise InputError("no manifest.json in the folder", path=str(out))
    try:
        manifest = json.loads(mpath.read_text())
        files = manifest["files"]
    except (json.JSONDecodeError, KeyError) as err:
        raise InputError(f"manifest is not valid: {err}", path=str(mpath)) from None
    problems = []
    for rel, info in files.items():
        p = out / rel
        if not p.exists():
            problems.append(f"{rel}: missing")
            continue
        now = file_info(p)
        if now["lines"] != info["lines"]:
            problems.append(f"{rel}: {now['lines']} lines, manifest says {info['lines']}")
        if now["sha256"] != info["sha256"]:
            problems.append(f"{rel}: sha256 {now['sha256'][:12]}... differs from manifest {info['sha256'][:12]}...")
    listed = set(files)
    for p in _built_files(out):
        rel = p.relative_to(out).as_posix()
        if rel not in listed:
            problems.append(f"{rel}: not in the manifest")
    return problems
