"""A built folder's manifest: every file's line count and sha256, and the check of a folder against it
(``gnnca data verify``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..errors import InputError


def built_files(out: Path) -> list[Path]:
    """Every file the manifest covers: all but the manifest itself and hidden (temporary) files."""
    return sorted(p for p in out.rglob("*") if p.is_file() and p.name != "manifest.json" and not p.name.startswith("."))


def file_info(path: Path) -> dict[str, Any]:
    """Line count and sha256 in one read of the file (used by the manifest and by ``verify``)."""
    h = hashlib.sha256()
    n_lines = 0
    last = b""
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
            n_lines += block.count(b"\n")
            last = block[-1:]
    if last not in (b"", b"\n"):
        n_lines += 1  # a last line without its newline still counts, as iterating the file would
    return {"lines": n_lines, "sha256": h.hexdigest()}


def verify(out: str | Path) -> list[str]:
    """Re-check a built folder against its manifest; returns one message per mismatch (empty = all good)."""
    out = Path(out)
    if out.is_file():
        raise InputError("is a file, not a folder (give the folder that holds manifest.json)", path=str(out))
    if not out.is_dir():
        raise InputError("folder not found", path=str(out))
    mpath = out / "manifest.json"
    if not mpath.exists():
        raise InputError("no manifest.json in the folder", path=str(out))
    try:
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", path=str(mpath)) from None
    except json.JSONDecodeError as err:
        raise InputError(f"not valid JSON ({err.msg}, line {err.lineno})", path=str(mpath)) from None
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict) or not all(
        isinstance(v, dict) and {"lines", "sha256"} <= set(v) for v in files.values()
    ):
        raise InputError("not a gnnca data build manifest (no 'files' map of lines and sha256)", path=str(mpath))
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
    if "extra" in manifest:
        from .extra import check_counts

        try:
            problems.extend(check_counts(manifest["extra"]))
        except (AttributeError, KeyError, TypeError):
            problems.append("manifest extra: not the counts gnnca data build --extra writes")
    listed = set(files)
    for p in built_files(out):
        rel = p.relative_to(out).as_posix()
        if rel not in listed:
            problems.append(f"{rel}: not in the manifest")
    return problems
