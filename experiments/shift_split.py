"""Build a shifted test split from the benchmark's own test reactions: ``test_scaffold`` holds the test_in lines
whose main product has a ring scaffold (Bemis-Murcko, RDKit) that no training product has, where the training
products are those of the local training reactions and every product of the extra sources the bundled models
also trained on (USPTO-500-MT, USPTO-full valid/test; read raw, so a superset of the reactions the extra build
kept). A model meets such a reaction's product core for the first time, while its reagents and reaction type may
be familiar: a shift of chemistry, not of format. Test products are never training products (the build removes
them), so the scaffold is the next coarser grain.

For each x1 variant the selected lines are written as ``src-/tgt-/meta-test_scaffold`` (line N of each about the
same reaction, in test_in order), with a ``manifest.json`` of counts and sha256, ready for ``gnnca predict`` and
``gnnca bench calibration --split test_scaffold``.

The same two shifts of the validation reactions, for fitting (never test lines): ``valid_scaffold`` (the valid
lines whose main product's scaffold no training product has) and ``valid_out`` (for the Type-2 variants, every
valid reaction written with the out-of-set coefficients 6-10 by the benchmark's own generator, as test_out writes
the test reactions; its own seeded draw; a Type-1 line is written alike whatever its coefficients).
``gnnca bench calibration --shifted runs/shift --shifted-splits valid_out`` fits on them beside the valid lines:

    python experiments/shift_split.py --built built/full --data data --out runs/shift
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import json
import lzma
import sys
import time
from collections.abc import Iterator
from pathlib import Path

VARIANTS = ("F_T1_x1", "F_T2_x1", "S_T1_x1", "S_T2_x1")


def scaffold(smiles: str) -> str | None:
    """The Bemis-Murcko scaffold of a molecule (atom maps dropped), canonical; ``""`` for an acyclic molecule,
    ``None`` when RDKit cannot read it."""
    from rdkit import Chem, RDLogger
    from rdkit.Chem.Scaffolds import MurckoScaffold

    RDLogger.DisableLog("rdApp.*")
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return None
    for a in mol.GetAtoms():
        a.SetAtomMapNum(0)
    try:
        core = MurckoScaffold.GetScaffoldForMol(mol)
    except (RuntimeError, ValueError):
        return None
    return Chem.MolToSmiles(core) if core.GetNumAtoms() else ""


def main_product(nu: list[list]) -> str | None:
    """The product of a reaction with the most heavy atoms (by-products such as HCl or water are smaller)."""
    from rdkit import Chem

    best, size = None, -1
    for mol, v in nu:
        if v <= 0:
            continue
        m = Chem.MolFromSmiles(mol)
        n = m.GetNumHeavyAtoms() if m is not None else 0
        if n > size:
            best, size = mol, n
    return best


def extra_products(data: Path) -> Iterator[str]:
    """Every product SMILES of the raw extra sources (USPTO-500-MT ``reactants>>product``; USPTO-full ``input``)."""
    with gzip.open(data / "uspto_500_mt" / "uspto_500.csv.gz", "rt", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            yield from row["rxn"].split(">>")[-1].split(".")
    for name in ("uspto_valT.csv.xz", "uspto_testT.csv.xz"):
        with lzma.open(data / "uspto_full_gln_valtest" / name, "rt", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                yield from row["input"].split(".")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--built", type=Path, default=Path("built/full"))
    ap.add_argument("--data", type=Path, default=Path("data"))
    ap.add_argument("--out", type=Path, default=Path("runs/shift"))
    ap.add_argument("--split", default="test_scaffold")
    ap.add_argument("--seed", type=int, default=0, help="the build's seed (valid_out's draw)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    train: set[str] = set()
    seen: set[str] = set()
    n_train = 0
    for line in (args.built / "ChemAlgebra_S_T2_x1" / "meta-train.jsonl").open(encoding="utf-8"):
        for mol, v in json.loads(line)["nu"]:
            if v > 0 and mol not in seen:
                seen.add(mol)
                s = scaffold(mol)
                if s:
                    train.add(s)
        n_train += 1
    n_extra = 0
    for mol in extra_products(args.data):
        n_extra += 1
        if mol not in seen:
            seen.add(mol)
            s = scaffold(mol)
            if s:
                train.add(s)
    print(f"{len(train):,} training scaffolds from {n_train:,} local reactions and {n_extra:,} extra products "
          f"({time.perf_counter() - t0:.0f} s)")  # fmt: skip
    manifest = {
        "command": "python experiments/shift_split.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "definition": "test_in (valid) lines whose main product's Murcko scaffold is in no training product's "
        "scaffolds; valid_out: the valid reactions written with coefficients 6-10",
        "training_scaffolds": len(train),
        "files": {},
    }
    for base, split in (("test_in", args.split), ("valid", "valid_scaffold")):
        metas = [json.loads(x) for x in (args.built / "ChemAlgebra_S_T2_x1" / f"meta-{base}.jsonl").open()]
        keep, counts = unseen_scaffolds(metas, train)
        manifest[split] = {f"{base}_reactions": len(metas), **counts, "kept": len(keep)}
        for v in VARIANTS:
            write_subset(args.built / f"ChemAlgebra_{v}", args.out, v, base, split, keep, manifest["files"])
        print(f"{split}: kept {len(keep):,} of {len(metas):,} {base} reactions ({counts}); "
              f"{time.perf_counter() - t0:.0f} s")  # fmt: skip
    manifest["valid_out"] = write_valid_out(args.built, args.out, args.seed, manifest["files"])
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return 0


def unseen_scaffolds(metas: list[dict], train: set[str]) -> tuple[set[int], dict[str, int]]:
    """The reactions (``rxn``) whose main product's scaffold is not in ``train``, and the counts of those left out."""
    keep: set[int] = set()
    acyclic = unreadable = 0
    for m in metas:
        prod = main_product(m["nu"])
        s = scaffold(prod) if prod else None
        if s is None:
            unreadable += 1
        elif s == "":
            acyclic += 1
        elif s not in train:
            keep.add(int(m["rxn"]))
    return keep, {"acyclic_main_products": acyclic, "unreadable_main_products": unreadable}


def _write(path: Path, lines: list[str], out: Path, files: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    tmp.replace(path)
    files[str(path.relative_to(out))] = {"lines": len(lines), "sha256": _sha(path)}


def write_subset(src_dir: Path, out: Path, v: str, base: str, split: str, keep: set[int], files: dict) -> None:
    """The lines of ``src_dir``'s ``base`` files whose reaction is in ``keep``, as the ``split`` files."""
    out_dir = out / f"ChemAlgebra_{v}"
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = [json.loads(x) for x in (src_dir / f"meta-{base}.jsonl").open()]
    idx = [i for i, r in enumerate(rows) if int(r["rxn"]) in keep]
    for kind, ext in (("src", "txt"), ("tgt", "txt"), ("meta", "jsonl")):
        lines = (src_dir / f"{kind}-{base}.{ext}").read_text(encoding="utf-8").splitlines()
        _write(out_dir / f"{kind}-{split}.{ext}", [lines[i] for i in idx], out, files)


def write_valid_out(built: Path, out: Path, seed: int, files: dict) -> int:
    """Every valid reaction written with the out-of-set coefficients by the benchmark's generator (the build's
    ``generate_lines``, with the split name ``valid_out`` in its seed): ``src-/tgt-/meta-valid_out``."""
    from gnn_chemalgebra.data.build import generate_lines

    bal = [json.loads(x) for x in (built / "uspto_bal" / "reactions-valid.jsonl").open(encoding="utf-8")]
    for v in [v for v in VARIANTS if "_T2_" in v]:  # a Type-1 line is written alike whatever its coefficients
        rows = list(generate_lines(f"ChemAlgebra_{v}", "valid_out", "valid", bal, ["out"] * len(bal), seed))
        out_dir = out / f"ChemAlgebra_{v}"
        out_dir.mkdir(parents=True, exist_ok=True)
        for j, (kind, ext) in enumerate((("src", "txt"), ("tgt", "txt"), ("meta", "jsonl"))):
            _write(out_dir / f"{kind}-valid_out.{ext}", [r[j] for r in rows], out, files)
    return len(bal)


if __name__ == "__main__":
    raise SystemExit(main())
