"""Write a variant whose training split is a seeded random share of another build's (valid and test unchanged).

Why: a data-scaling curve (EM against the number of training reactions, one recipe) says whether a model is
starved of reactions and how many more a target would need. Lines are drawn without replacement and keep their
file order; every reaction of the share comes from the build's own training split, so no valid or test reaction
can reach training. ``subsample_manifest.json`` records the fraction, seed, counts and every file's sha256.

    python scripts/subsample_train.py --built built/extra --variant ChemAlgebra_F_T1_x1 --fraction 0.25 \
      --out built/extra_f25
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from gnn_chemalgebra.data.layout import copy_eval_splits, split_files
from gnn_chemalgebra.io import atomic_write_lines, read_lines, sha256_file


def chosen_lines(n: int, fraction: float, seed: int) -> list[int]:
    """Indices of ``round(n * fraction)`` lines (at least one), drawn with ``random.Random(seed)``, in file order."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must lie in (0, 1], got {fraction}")
    k = max(1, round(n * fraction))
    return sorted(random.Random(seed).sample(range(n), k))


def subsample(built: Path, variant: str, out: Path, fraction: float, seed: int = 0) -> dict:
    files = split_files(built, variant, "train")
    missing = [str(p) for p in files if not p.exists()]
    if missing:
        raise SystemExit(f"subsample_train: error: {missing[0]}: no such file (build the variant first)")
    src, tgt, meta = (read_lines(p) for p in files)
    if not len(src) == len(tgt) == len(meta):
        raise SystemExit(f"subsample_train: error: {files[0].parent}: train src/tgt/meta line counts differ")
    keep = chosen_lines(len(src), fraction, seed)
    manifest: dict = {
        "variant": variant, "built": str(built), "fraction": fraction, "seed": seed,
        "train_lines_read": len(src), "train_lines_kept": len(keep), "files": {},
    }  # fmt: skip
    (out / variant).mkdir(parents=True, exist_ok=True)
    for p, lines in zip(split_files(out, variant, "train"), (src, tgt, meta), strict=True):
        atomic_write_lines(p, [lines[i] for i in keep])
        manifest["files"][p.name] = sha256_file(p)
    for files in copy_eval_splits(built, variant, out).values():
        manifest["files"].update(files)
    atomic_write_lines(out / variant / "subsample_manifest.json", [json.dumps(manifest, indent=1)])
    return manifest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--built", type=Path, default=Path("built/extra"), help="built datasets (gnnca data build)")
    ap.add_argument("--variant", required=True, help="e.g. ChemAlgebra_F_T1_x1")
    ap.add_argument("--fraction", type=float, required=True, help="share of the training lines kept, in (0, 1]")
    ap.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    ap.add_argument("--out", type=Path, required=True, help="where the variant folder goes")
    args = ap.parse_args()
    if not 0 < args.fraction <= 1:
        ap.error(f"--fraction must lie in (0, 1], got {args.fraction}")
    m = subsample(args.built, args.variant, args.out, args.fraction, args.seed)
    print(json.dumps({k: m[k] for k in ("variant", "fraction", "seed", "train_lines_read", "train_lines_kept")}))


if __name__ == "__main__":
    main()
