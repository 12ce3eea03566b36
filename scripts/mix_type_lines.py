"""Write a Type-2 variant whose training split also holds the Type-1 lines of the same reactions.

Why: a Type-1 source is a valid Type-2 source (equal coefficients, no product present), so one model trained on
both reads equal coefficients, unequal ones and products already present alike. Training
lines interleave (T1 line i, T2 line i, ...); the validation split and every test split are the Type-2 variant's
own, so the benchmark's valid/test files never change. Same reactions on both sides (the builder draws both
variants from one reaction split), so no valid or test reaction reaches training.

    python scripts/mix_type_lines.py --built built/full --variant ChemAlgebra_F_T2_x1 --out built/mixed
    gnnca train --config configs/gnn_cpu.yaml --set data.dir=built/mixed --set data.variant=ChemAlgebra_F_T2_x1
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gnn_chemalgebra.data.layout import copy_eval_splits, split_files
from gnn_chemalgebra.io import atomic_write_lines, read_lines


def mix(built: Path, variant: str, out: Path, splits: tuple[str, ...] = ("train", "train_cross")) -> dict:
    if "_T2_" not in variant:
        raise SystemExit(f"mix_type_lines: error: {variant}: expected a Type-2 variant name")
    t1 = variant.replace("_T2_", "_T1_")
    manifest: dict = {"variant": variant, "type1_from": t1, "built": str(built), "splits": {}}
    for split in splits:
        a_files, b_files = split_files(built, t1, split), split_files(built, variant, split)
        if not all(p.exists() for p in (*a_files, *b_files)):
            continue
        a, b = [read_lines(p) for p in a_files], [read_lines(p) for p in b_files]
        if len({len(x) for x in a}) != 1 or len({len(x) for x in b}) != 1:
            raise SystemExit(f"mix_type_lines: error: {built}: {split}: src/tgt/meta line counts differ")
        ra = [json.loads(m)["rxn"] for m in a[2]]
        rb = [json.loads(m)["rxn"] for m in b[2]]
        if sorted(ra) != sorted(rb):
            raise SystemExit(f"mix_type_lines: error: {split}: {t1} and {variant} hold different reactions")
        mixed = [[x for pair in zip(a[i], b[i], strict=True) for x in pair] for i in range(3)]
        for p, lines in zip(split_files(out, variant, split), mixed, strict=True):
            atomic_write_lines(p, lines)
        manifest["splits"][split] = {"lines": len(mixed[0]), "type1": len(a[0]), "type2": len(b[0])}
    for split, files in copy_eval_splits(built, variant, out).items():
        manifest["splits"].setdefault(split, {}).update(files)
    atomic_write_lines(out / variant / "mix_manifest.json", [json.dumps(manifest, indent=1)])
    return manifest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--built", type=Path, default=Path("built/full"), help="built datasets (gnnca data build)")
    ap.add_argument("--variant", required=True, help="the Type-2 variant, e.g. ChemAlgebra_F_T2_x1")
    ap.add_argument("--out", type=Path, required=True, help="where the mixed variant folder goes")
    args = ap.parse_args()
    (args.out / args.variant).mkdir(parents=True, exist_ok=True)
    print(json.dumps(mix(args.built, args.variant, args.out)["splits"], indent=1))


if __name__ == "__main__":
    main()
