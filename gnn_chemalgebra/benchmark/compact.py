"""``gnnca bench compact``: a folder of shipped checkpoints (the bundled models) rewritten in compact form.

Each ``*.pt`` gets its weight matrices stored in half precision (:func:`..checkpoint.compact_state`; the loader
casts them back to float32) and loses any training-only state. Rewriting a file changes its sha256, which the
calibration sidecars (``*.trust.json``) bind, for their own checkpoint and for the edit and Type-1 models they
were fitted with: every such sha256 of a rewritten file is replaced by the new one, so calibrated confidences and
the in-domain index keep working. Last, ``checksums.json`` lists the sha256 of every checkpoint and sidecar,
which loading a listed checkpoint checks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import typer

BUNDLED = Path(__file__).resolve().parents[1] / "checkpoints"  # package data


def _rebind(obj: Any, renamed: dict[str, str]) -> Any:
    """``obj`` (decoded JSON) with every string that is an old sha256 in ``renamed`` replaced by the new one."""
    if isinstance(obj, dict):
        return {k: _rebind(v, renamed) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_rebind(v, renamed) for v in obj]
    return renamed.get(obj, obj) if isinstance(obj, str) else obj


def compact_folder(
    folder: Path,
    dtype: str = "float16",
    full: Sequence[str] = (),
    keep: Sequence[str] = (),
    log: Callable[[str], None] = lambda _: None,
) -> list[dict[str, Any]]:
    """Rewrite every checkpoint of ``folder`` compactly (those named in ``full`` in float32, the tensors named in
    ``keep`` in float32 in every file), re-bind the sidecars, write ``checksums.json``; one row per checkpoint
    (sizes, sha256 before and after, how many tensors were cast)."""
    from ..checkpoint import compact_state, load_checkpoint, save_checkpoint
    from ..errors import InputError
    from ..io import atomic_write_json, sha256_file, write_checksums

    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("not a folder of checkpoints", path=str(folder))
    names = sorted(p.name for p in folder.glob("*.pt"))
    if not names:
        raise InputError("no *.pt checkpoint in this folder", path=str(folder))
    unknown = sorted(set(full) - set(names))
    if unknown:
        raise InputError(f"--full names no checkpoint of this folder: {', '.join(unknown)}", path=str(folder))
    rows, renamed = [], {}
    for name in names:
        path = folder / name
        before, size = sha256_file(path), path.stat().st_size
        ck = load_checkpoint(path, require=("model",), check=False)  # the list is rewritten below
        state = compact_state(ck, dtype, list(ck["model"]) if name in full else keep)  # full: none cast
        save_checkpoint(path, state)
        after = sha256_file(path)
        renamed[before] = after
        cast = state["meta"]["compact"]["tensors"]
        rows.append(
            {
                "file": name,
                "dtype": dtype if cast else "float32",
                "tensors_cast": len(cast),
                "bytes_before": size,
                "bytes_after": path.stat().st_size,
                "sha256_before": before,
                "sha256_after": after,
            }
        )
        row = rows[-1]
        log(f"{name}: {size / 1e6:.2f} -> {row['bytes_after'] / 1e6:.2f} MB ({len(cast)} tensors {row['dtype']})")
    sidecars = sorted(folder.glob("*.trust.json"))
    for js in sidecars:
        d = json.loads(js.read_text(encoding="utf-8"))
        atomic_write_json(js, _rebind(d, renamed))
        log(f"{js.name}: re-bound to the rewritten checkpoints")
    conformal = sorted(p.name for p in folder.glob("*.conformal.json"))
    changed = {r["file"] for r in rows if r["sha256_before"] != r["sha256_after"]}
    stale = [c for c in conformal if c.removesuffix(".conformal.json") in changed]  # <checkpoint>.conformal.json
    if stale:
        log(f"{', '.join(stale)}: bound to the old checkpoints' sha256: refit them (gnnca bench conformal)")
    listed = [*names, *(p.name for p in sidecars), *(p.name for p in sorted(folder.glob("*.trust.npz"))), *conformal]
    log(f"wrote {write_checksums(folder, listed).name} ({len(listed)} files)")
    return rows


def add_compact_command(bench: typer.Typer, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    """Register ``gnnca bench compact`` on the bench app."""

    @bench.command("compact")
    @wrap
    def compact(
        folder: Path = typer.Argument(BUNDLED, help="Folder of checkpoints (default: the bundled models)."),
        dtype: str = typer.Option("float16", "--dtype", help="Storage of the weight matrices: float16 or bfloat16."),
        full: list[str] = typer.Option([], "--full", help="A checkpoint (file name) kept in float32 (repeatable)."),
        keep: list[str] = typer.Option(
            [], "--keep-tensor", help="A tensor name kept in float32 in every file (repeatable)."
        ),
        json_out: Path = typer.Option(None, "--json", help="Also write the per-file rows here."),
    ) -> None:
        """Rewrite a folder of shipped checkpoints compactly: weight matrices in half precision (cast back to
        float32 on load), no training-only state; re-bind the calibration sidecars and write checksums.json, which
        loading a listed checkpoint checks. Run it after replacing a bundled model."""
        from ..io import atomic_write_json

        rows = compact_folder(folder, dtype, full, keep, log=lambda m: typer.echo(m, err=True))
        if json_out is not None:
            atomic_write_json(json_out, rows)
