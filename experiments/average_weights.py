"""Average the weights of checkpoints fine-tuned from one start model (a "model soup"): one network of the same
size and speed as each, unlike an ensemble (``--checkpoint a.pt,b.pt``), which runs every member. Runs that start
from the same weights and differ only in their seed stay in one basin, where the average of the weights is a
model of its own; runs from different starts do not average (their hidden units are permuted), so the script
refuses checkpoints whose architecture, featuriser or identity rows differ.

Writes OUT with the first checkpoint's config, featuriser and versions, and a ``meta.averaged_from`` list of the
inputs' paths and sha256::

    python experiments/average_weights.py runs/ft/t2_only.pt runs/ft/t2_only_s1.pt --out runs/ft/t2_soup.pt
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from gnn_chemalgebra.checkpoint import load_checkpoint, save_checkpoint
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.io import sha256_file


def average(paths: list[Path]) -> dict:
    """The first checkpoint's entries with ``model`` the element-wise mean of every checkpoint's weights."""
    first = load_checkpoint(paths[0])
    total = {k: v.double().clone() if v.is_floating_point() else v for k, v in first["model"].items()}
    for p in paths[1:]:
        ck = load_checkpoint(p)
        if ck.get("featurizer") != first.get("featurizer"):
            raise InputError("featuriser (vocabularies, identity rows) unlike the first checkpoint's", path=str(p))
        weights = ck["model"]
        if weights.keys() != total.keys():
            raise InputError("weights of another architecture than the first checkpoint's", path=str(p))
        for k, v in weights.items():
            if v.shape != total[k].shape:
                raise InputError(f"weight {k} has shape {tuple(v.shape)}, not {tuple(total[k].shape)}", path=str(p))
            if v.is_floating_point():
                total[k] += v.double()
            elif not torch.equal(v, total[k]):
                raise InputError(f"integer entry {k} differs from the first checkpoint's", path=str(p))
    n = len(paths)
    model = {k: (v / n).to(first["model"][k].dtype) if v.is_floating_point() else v for k, v in total.items()}
    meta = dict(first.get("meta") or {})
    meta["averaged_from"] = [{"checkpoint": str(p), "sha256": sha256_file(p)} for p in paths]
    return {**first, "model": model, "meta": meta}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoints", nargs="+", type=Path, help="exported checkpoints fine-tuned from one start")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    if len(args.checkpoints) < 2:
        ap.error("give at least two checkpoints")
    try:
        state = average(args.checkpoints)
    except InputError as err:
        print(f"average_weights: error: {err}", file=sys.stderr)
        return 2
    save_checkpoint(args.out, state)
    print(f"averaged {len(args.checkpoints)} checkpoints -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
