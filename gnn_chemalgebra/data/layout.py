"""Where built files live. This docstring is the contract between the builder and its readers.

``gnnca data build --out OUT`` writes::

    OUT/manifest.json        seed, protocol, versions, uspto_bal counts, every file's line count and sha256
    OUT/skipped.tsv          mit_split, mit_index, reason, detail -- one row per reaction not in USPTO-BAL
    OUT/uspto_mit_separated/src-{valid,test}.txt   "reactants>reagents" (canonical SMILES, '.'-joined)
                            tgt-{valid,test}.txt   products (canonical SMILES, '.'-joined)
    OUT/uspto_bal/src-{train,valid,test}.txt       benchmark format, all coefficients {1}
                 tgt-{train,valid,test}.txt
                 reactions-{train,valid,test}.jsonl  one base reaction per line (see BaseReaction)
    OUT/ChemAlgebra_{F|S}_T{1|2}_x{1|5}/src-<split>.txt, tgt-<split>.txt, meta-<split>.jsonl
        splits: train, valid, test_in, test_out, train_cross, valid_cross, test_cross

A ``reactions-*.jsonl`` record::

    {"id": 0, "mit_split": "valid", "mit_index": 17, "status": "balanced" | "rebalanced",
     "reactants": [smiles, ...],   # includes the reactant-side leftover chain, if any
     "reagents": [smiles, ...], "products": [smiles, ...],   # products include the product-side leftover
     "leftover_product": smiles | null, "leftover_reactant": smiles | null,
     "mapped": "<atom-mapped reaction SMILES from rexgen_direct>", "edits": "<rexgen edit field>"}

A ``meta-<split>.jsonl`` record (line i describes line i of src/tgt)::

    {"rxn": id in reactions-<bal_split>.jsonl, "bal_split": "train" | "valid" | "test",
     "set": "in" | "out" (algebra.extent.S_IN / S_OUT), "xi": extent (Type 1: k; Type 2: k_hat),
     "k": {mol: k_m}  (Type 1: every molecule has the one k),
     "src_roles": ["reactant" | "reagent" | "product", ...]  one per source term, in line order,
     "tgt_roles": ["product" | "reagent" | "reactant", ...]  one per target term,
     "nu": [[mol, n], ...]  base reaction in this variant's molecule strings (formulas for F variants):
                            n = (#product occurrences) - (#reactant occurrences), zeros omitted}

Identity checked for every line: totals(tgt) == totals(src) + xi * nu, per molecule string.

Local protocol (only MIT valid+test bundled): USPTO-BAL train/valid = a seeded 90/10 split of the reactions
kept from MIT valid; USPTO-BAL test = the reactions kept from MIT test. Paper protocol (``--source`` with a
train split): MIT train/valid/test map to USPTO-BAL train/valid/test.

``--extra`` (:mod:`.extra`) appends further training reactions to USPTO-BAL train (ids after the local ones);
their records have ``"mit_split": null, "mit_index": null`` and ``"source": {"set": "uspto_500_mt" |
"uspto_full", "split": ..., "line": 1-based CSV line}``; USPTO-500-MT records have ``"mapped": null``. Only
``train`` and ``train_cross`` (and uspto_bal ``*-train``) gain lines, appended after the local ones;
``OUT/extra_skipped.tsv`` lists every extra row not kept (source, split, line, reason, detail) and the
manifest's ``extra`` section counts them per source.
"""

from __future__ import annotations

from pathlib import Path

VARIANTS: tuple[str, ...] = tuple(f"ChemAlgebra_{r}_T{t}_x{x}" for r in ("F", "S") for t in (1, 2) for x in (1, 5))
VARIANT_SPLITS: tuple[str, ...] = (
    "train",
    "valid",
    "test_in",
    "test_out",
    "train_cross",
    "valid_cross",
    "test_cross",
)
TEST_SETTINGS: tuple[str, ...] = ("test_in", "test_cross", "test_out")
BAL_SPLITS: tuple[str, ...] = ("train", "valid", "test")


def variant_short(name: str) -> str:
    """``ChemAlgebra_F_T1_x1`` -> ``F_T1_x1``."""
    return name.removeprefix("ChemAlgebra_")


def variant_props(name: str) -> dict[str, object]:
    """Representation, type and multiplicity of a variant name (short or long)."""
    r, t, x = variant_short(name).split("_")
    return {"repr": "formula" if r == "F" else "smiles", "type": int(t[1]), "x": int(x[1])}


def variant_dir(out: Path, variant: str) -> Path:
    """The folder of ``variant`` under ``out``. Variants are named short (``F_T1_x1``) in some places and long
    (``ChemAlgebra_F_T1_x1``, the folder's name) in others: a short name finds the long-named folder. A long name
    is taken as given, so the builders, which write long names, never write into another folder."""
    d = Path(out) / variant
    if not variant.startswith("ChemAlgebra_") and not d.is_dir() and (Path(out) / f"ChemAlgebra_{variant}").is_dir():
        return Path(out) / f"ChemAlgebra_{variant}"
    return d


def split_files(out: Path, variant: str, split: str) -> tuple[Path, Path, Path]:
    d = variant_dir(out, variant)
    return d / f"src-{split}.txt", d / f"tgt-{split}.txt", d / f"meta-{split}.jsonl"


EVAL_SPLITS: tuple[str, ...] = ("valid", "valid_cross", "test_in", "test_out", "test_cross")


def copy_eval_splits(built: Path, variant: str, out: Path) -> dict[str, dict[str, str]]:
    """Copies a variant's validation and test files (those present) from ``built`` to ``out`` unchanged, for a
    derived training set that must be scored on the benchmark's own lines; returns {split: {file name: sha256}}."""
    import shutil

    from ..io import sha256_file

    copied: dict[str, dict[str, str]] = {}
    for split in EVAL_SPLITS:
        for src in split_files(built, variant, split):
            if src.exists():
                dst = Path(out) / variant / src.name
                shutil.copyfile(src, dst)
                copied.setdefault(split, {})[src.name] = sha256_file(dst)
    return copied
