"""Bundled models: a slim copy of a benchmark run's best checkpoint (no optimiser or RNG state) with its test
metrics, and a model card generated from the same facts (data, config, budget, metrics, command)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..io import CHECKSUMS, atomic_write_text
from .records import METRICS, Record, read_marker

KEEP = ("model", "epoch", "config", "featurizer", "versions")


def slim_copy(
    src: Path, dst: Path, extra_meta: dict[str, Any] | None = None, decode: Sequence[str] = ()
) -> dict[str, Any]:
    """Write weights, config, featuriser, versions and metadata of ``src`` to ``dst``; returns the checkpoint.
    ``decode``: ``decode.key=value`` settings saved into the copy's decode section (how it predicts by default)."""
    import dataclasses

    from ..checkpoint import load_checkpoint, save_checkpoint
    from ..config import decode_overrides, decode_settings

    ck = load_checkpoint(src)
    if decode:
        cfg = dict(ck.get("config") or {})
        cfg["decode"] = dataclasses.asdict(decode_overrides(decode_settings(cfg), decode))
        ck["config"] = cfg
    meta = {k: v for k, v in (ck.get("meta") or {}).items() if k != "rng"}
    meta.update({"source_run": str(src), **(extra_meta or {})})
    dst.parent.mkdir(parents=True, exist_ok=True)
    save_checkpoint(dst, {**{k: ck[k] for k in KEEP if k in ck}, "meta": meta})
    return {**ck, "meta": meta}


def keep_identity_rows(path: Path, min_count: int, log: Callable[[str], None] = lambda _: None) -> int:
    """Rewrite the checkpoint at ``path`` (a bag GNN with identity rows, ``model.identity_min_count``) with only the
    rows of compositions found in at least ``min_count`` lines of the training data its config names
    (``data.dir`` with ``data.limit``, then ``data.extra_dirs``); returns how many are kept. A model fine-tuned
    from one with a row per molecule of a larger training set carries many rows it never met again, and they are
    most of its file. A molecule without a row reads as unknown, as any molecule the model never saw does."""
    import torch

    from ..checkpoint import load_checkpoint, save_checkpoint
    from ..config import typed
    from ..data.featurize import Featurizer
    from ..errors import InputError
    from ..training.gnn import identity_keys, training_lines

    ck = load_checkpoint(path, check=False)  # just written by the export: a shipped folder's list predates it
    state, data = ck["model"], typed(ck.get("config") or {}).data
    if "ident_keys" not in state or not data.dir:
        raise InputError("the checkpoint has no identity rows or names no training data", path=str(path))
    lines = [ex for _, folder in training_lines(data) for ex in folder]
    keys, emb = state["ident_keys"], state["ident_emb.weight"]
    seen = identity_keys(lines, Featurizer(ck["featurizer"]["repr"]), min_count)
    kept = torch.nonzero(torch.isin(keys, seen)).flatten()
    state = {**state, "ident_keys": keys[kept].clone(), "ident_emb.weight": torch.cat([emb[:1], emb[kept + 1]])}
    meta = dict(ck.get("meta") or {})
    config = meta["model_config"]
    meta["model_config"] = {**config, "encoder": {**config["encoder"], "identity_vocab": int(kept.numel())}}
    meta["identity_rows"] = {"kept": int(kept.numel()), "of": int(keys.numel()), "min_count": min_count}
    save_checkpoint(path, {**ck, "model": state, "meta": meta})
    log(f"kept {kept.numel():,} of {keys.numel():,} identity rows (compositions in >= {min_count} training lines)")
    return int(kept.numel())


def export_model(
    run_dir: Path,
    records: Sequence[Record],
    dst: Path,
    edit_dst: Path | None = None,
    card: Path | None = None,
    log: Callable[[str], None] = lambda _: None,
    decode: Sequence[str] = (),
    identity_min_count: int = 0,
) -> None:
    """Export ``run_dir/best.pt`` with the test metrics of ``records`` (the run's variant, GNN rows); with
    ``edit_dst`` also the bond-edit model it decodes with; with ``card`` a generated model card; with
    ``identity_min_count`` only the identity rows of molecules that common in its training data
    (:func:`keep_identity_rows`)."""
    test = [{k: r.get(k) for k in ("setting", *METRICS, "n")} for r in records]
    src = run_dir / "best.pt"
    ck = slim_copy(src, dst, {"test_metrics": test}, decode)
    if identity_min_count:
        keep_identity_rows(dst, identity_min_count, log)
    log(f"exported {src} -> {dst} ({dst.stat().st_size / 1e6:.2f} MB)")
    edit_src = (ck.get("config") or {}).get("model", {}).get("edit_checkpoint")
    if edit_dst is not None and edit_src:
        slim_copy(Path(edit_src), edit_dst)
        log(f"exported {edit_src} -> {edit_dst} ({edit_dst.stat().st_size / 1e6:.2f} MB)")
    if card is not None:
        atomic_write_text(card, model_card(dst, ck, records, read_marker(run_dir) or {}))
        log(f"wrote {card}")
    if (dst.parent / CHECKSUMS).is_file():  # a shipped folder: its list no longer matches the new file
        log(f"{dst.parent} has a {CHECKSUMS}: run gnnca bench compact {dst.parent} before predicting with {dst.name}")


def model_card(dst: Path, ck: dict[str, Any], records: Sequence[Record], summary: dict[str, Any]) -> str:
    """Markdown: what the file is, its data, config, budget, test metrics and the command behind each row."""
    cfg = ck.get("config") or {}
    data, model, train = cfg.get("data", {}), cfg.get("model", {}), cfg.get("train", {})
    size = dst.stat().st_size / 1e6
    best = json.dumps(summary.get("best", {}))
    lines = [
        f"# `{dst.name}` -- {model.get('name', 'gnn')} model, `{data.get('variant')}`",
        "",
        f"Generated by `gnnca bench export`. {size:.2f} MB: weights, config, featuriser, library versions and test "
        "metrics; no optimiser state. Loaded with `torch.load(weights_only=True)`.",
        "",
        "## Data and budget",
        f"- variant `{data.get('variant')}`, training split `{data.get('train_split')}` "
        f"({summary.get('n_train', '?')} lines), validation `{data.get('val_split')}` "
        f"({summary.get('n_val', '?')} lines)",
        f"- {summary.get('steps', train.get('max_steps'))} optimiser steps, batch {train.get('batch_size')}, "
        f"lr {train.get('lr')}, {summary.get('n_params', '?')} parameters, best validation {best}",
        f"- source run: `{ck['meta'].get('source_run')}`",
        "",
        "## Config",
        "```json",
        json.dumps({"model": model, "train": train}, indent=1),
        "```",
        "",
        "## Test metrics (paper-mode scorer)",
        "| setting | EM | JAC | F1 | mol JAC | mol F1 | n |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in records:
        lines.append(
            f"| {r['setting']} | " + " | ".join(f"{r.get(k, float('nan')):.2f}" for k in METRICS) + f" | {r.get('n')} |"
        )
    commands = sorted({r["command"] for r in records if r.get("command")})
    lines += ["", "## Commands", *(f"- `{c}`" for c in commands), ""]
    return "\n".join(lines)
