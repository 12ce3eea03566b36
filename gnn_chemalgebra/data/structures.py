"""The structure most likely behind a formula, read off the SMILES lines of the same training reactions.

A formula line names a molecule by its element counts only. The benchmark writes every reaction in both
representations, so the SMILES training lines show which graph each training formula stood for (nearly always
one). Its Morgan count fingerprint gives the formula model what a learned per-composition identity vector cannot:
features shared across molecules (an acyl chloride anywhere tends to lose HCl), so what it learns about one
molecule transfers to another with the same groups. Only training lines are read: a test formula gets a
structure only if the training reactions contained that composition.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from rdkit import Chem
from rdkit.Chem import rdFingerprintGenerator, rdMolDescriptors

from ..chem.bag import parse_bag
from ..errors import InputError
from .layout import split_files

MORGAN_RADIUS = 2


def smiles_variant(formula_variant: str) -> str:
    """``ChemAlgebra_F_T1_x1`` -> ``ChemAlgebra_S_T1_x1``: the same reactions, written as SMILES."""
    if "_F_" not in formula_variant:
        raise InputError(f"structure rows need a formula variant, got {formula_variant!r}")
    return formula_variant.replace("_F_", "_S_", 1)


def read_smiles_molecules(data_dir: str | Path, formula_variant: str, split: str) -> list[list[str]]:
    """The source molecules of each SMILES line of ``split`` (the formula variant's twin)."""
    src, _, _ = split_files(Path(data_dir), smiles_variant(formula_variant), split)
    if not src.is_file():
        raise InputError(f"structure rows need the SMILES twin of the formula lines: {src} is missing", path=str(src))
    lines = src.read_text(encoding="utf-8").splitlines()
    return [[t.mol for t in parse_bag(line, path=str(src), line=i + 1)] for i, line in enumerate(lines)]


def formula_structures(lines: Iterable[Iterable[str]]) -> dict[str, str]:
    """Formula -> the SMILES that most training lines wrote for it (ties: the smallest string, so the choice is
    the same in every run). Counted once per line, as identity rows are."""
    seen: dict[str, Counter] = defaultdict(Counter)
    formula_of: dict[str, str | None] = {}
    for mols in lines:
        for smi in set(mols):
            if smi not in formula_of:
                mol = Chem.MolFromSmiles(smi)
                formula_of[smi] = rdMolDescriptors.CalcMolFormula(mol) if mol is not None else None
            formula = formula_of[smi]
            if formula is not None:
                seen[formula][smi] += 1
    return {f: min(c.items(), key=lambda kv: (-kv[1], kv[0]))[0] for f, c in seen.items()}


def morgan_counts(smiles: Iterable[str | None], n_bits: int) -> np.ndarray:
    """Folded Morgan count fingerprints (radius 2), counts clipped to 255: one uint8 row per molecule, zeros for
    ``None`` or an unreadable SMILES."""
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=MORGAN_RADIUS, fpSize=n_bits)
    rows = []
    for smi in smiles:
        mol = Chem.MolFromSmiles(smi) if smi else None
        row = np.zeros(n_bits, dtype=np.uint8)
        if mol is not None:
            row[:] = np.minimum(gen.GetCountFingerprintAsNumPy(mol), 255)
        rows.append(row)
    return np.stack(rows) if rows else np.zeros((0, n_bits), dtype=np.uint8)
