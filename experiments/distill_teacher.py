"""Teacher soft labels for distilling an ensemble into one bag GNN: the teacher (one checkpoint, or several whose
role and leftover log-probabilities are averaged) reads each training reaction once, on its line with the fewest
molecules, and its distributions are saved for the student's training run to read.

Writes OUT (.npz: per reaction its molecules' role log-probabilities and its leftover slots' count-class
log-probabilities) and OUT.json (counts, the checkpoints' and the training files' sha256); a training config
reads them with ``train.distill_labels=OUT train.distill_weight=W`` (gnn_chemalgebra/training/distill.py).

    python experiments/distill_teacher.py --built built/extra_mixed --variant ChemAlgebra_F_T2_x1 \
      --checkpoint a.pt,b.pt,c.pt,d.pt --out runs/distill/teacher_formula.npz
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

from gnn_chemalgebra.data.dataset import load_examples
from gnn_chemalgebra.data.layout import split_files
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.io import sha256_file
from gnn_chemalgebra.training.distill import compute_teacher, save_teacher


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--built", type=Path, required=True, help="built datasets (the student's data.dir)")
    ap.add_argument("--variant", required=True, help="the student's variant, e.g. ChemAlgebra_F_T2_x1")
    ap.add_argument("--split", default="train")
    ap.add_argument("--checkpoint", required=True, help="teacher checkpoint(s), comma-separated: an ensemble")
    ap.add_argument("--out", type=Path, required=True, help="the .npz to write (its manifest: OUT.json)")
    ap.add_argument("--limit", type=int, default=0, help="first N training lines only (0 = all)")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    paths = [p for p in args.checkpoint.split(",") if p]
    t0 = time.perf_counter()
    try:
        examples = load_examples(args.built, args.variant, args.split, args.limit)
        step = max(len(examples) // 20, 1)

        def progress(done: int, total: int) -> None:
            if done % step < args.batch_size or done == total:
                print(f"[teacher] {done:,}/{total:,} reactions, {time.perf_counter() - t0:.0f} s", file=sys.stderr)

        labels = compute_teacher(paths, examples, args.batch_size, progress)
        src, tgt, meta = split_files(args.built, args.variant, args.split)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        manifest = save_teacher(
            args.out,
            labels,
            {
                "teacher": [{"checkpoint": p, "sha256": sha256_file(p)} for p in paths],
                "data": {
                    "variant": args.variant,
                    "split": args.split,
                    "lines": len(examples),
                    "limit": args.limit,
                    "src_sha256": sha256_file(src),
                    "meta_sha256": sha256_file(meta),
                },
                "seconds": round(time.perf_counter() - t0, 1),
                "command": "python experiments/distill_teacher.py " + " ".join(sys.argv[1:] if argv is None else argv),
            },
        )
    except InputError as err:
        print(f"distill_teacher: error: {err}", file=sys.stderr)
        return 2
    counts = f"{manifest['reactions']:,} reactions, {manifest['molecules']:,} molecules, {manifest['slots']:,} slots"
    print(f"[teacher] {counts} -> {args.out} ({manifest['bytes']:,} bytes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
