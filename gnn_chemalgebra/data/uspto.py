"""USPTO-MIT reactions -> the "separated" form -> USPTO-BAL base reactions (benchmark page, section 2).

One function, :func:`process_reaction`, does all the RDKit work for one reaction so that it can run in a
worker process; it returns either a base-reaction record or a skip reason, never raises for bad chemistry.
"""

from __future__ import annotations

import gzip
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from rdkit import Chem
from rdkit.Chem import rdMolDescriptors

from ..chem.composition import atom_label
from ..chem.leftover import leftover_molecule
from ..errors import InputError

ATOM_MAP = re.compile(r":(\d+)\]")

# Reasons a reaction does not reach USPTO-BAL (keys of the skip report).
SKIP_UNPARSABLE_REACTANTS = "unparsable_reactants"
SKIP_UNPARSABLE_PRODUCT = "unparsable_product"
SKIP_NO_REACTANT = "no_reactant"
SKIP_LEFTOVER_REJECTED = "leftover_rejected_by_rdkit"
SKIP_RECHECK = "unbalanced_after_leftover"
SKIP_MALFORMED = "malformed_line"


@dataclass(frozen=True)
class RawReaction:
    """One line of the bundled sources: the atom-mapped reaction, its edits, and the MIT product target."""

    index: int
    mapped: str
    edits: str
    edits_proc: str | None
    target: str


def _open_text(path: Path):
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8")


def find_source_file(folder: Path, stem: str) -> Path | None:
    """``stem`` or ``stem.gz`` inside ``folder``, whichever exists."""
    for cand in (folder / stem, folder / f"{stem}.gz"):
        if cand.exists():
            return cand
    return None


def read_split(source: Path, split: str, limit: int | None = None) -> list[RawReaction]:
    """Read one MIT split from a source folder laid out like the bundled ``data/``."""
    mapped_path = find_source_file(source / "uspto_mit_mapped", f"{split}.txt")
    tgt_path = find_source_file(source / "uspto_mit_tgt", f"tgt-{split}.txt")
    if mapped_path is None or tgt_path is None:
        raise InputError(
            f"split {split!r} needs uspto_mit_mapped/{split}.txt[.gz] and uspto_mit_tgt/tgt-{split}.txt[.gz]",
            path=str(source),
        )
    proc_path = find_source_file(source / "uspto_mit_mapped", f"{split}.txt.proc")
    with _open_text(mapped_path) as fh:
        mapped_lines = fh.read().splitlines()
    with _open_text(tgt_path) as fh:
        tgt_lines = fh.read().splitlines()
    proc_lines: list[str] | None = None
    if proc_path is not None:
        with _open_text(proc_path) as fh:
            proc_lines = fh.read().splitlines()
    if len(mapped_lines) != len(tgt_lines):
        raise InputError(
            f"{mapped_path} has {len(mapped_lines)} lines but {tgt_path} has {len(tgt_lines)}",
            path=str(mapped_path),
        )
    n = len(mapped_lines) if limit is None else min(limit, len(mapped_lines))
    out = []
    for i in range(n):
        rxn, _, edits = mapped_lines[i].partition(" ")
        proc = None
        if proc_lines is not None and i < len(proc_lines):
            proc = proc_lines[i].partition(" ")[2]
        out.append(RawReaction(i, rxn, edits, proc, tgt_lines[i].replace(" ", "")))
    return out


def canonical_fragment(smiles: str) -> str | None:
    """Canonical SMILES of a (mapped) fragment without its atom maps, or ``None`` if RDKit refuses it.

    The map numbers are removed from the string (``[CH3:4]`` -> ``[CH3]``, the same bracket atom), so the
    many recurring solvents, bases and salts, mapped differently in every reaction, hit one cache entry.
    """
    can = _canon_unmapped(ATOM_MAP.sub("]", smiles))
    return can if can is not None and _facts(can) is not None else None  # RDKit must re-read what it wrote


@lru_cache(maxsize=200_000)
def _canon_unmapped(smiles: str) -> str | None:
    mol = Chem.MolFromSmiles(smiles)
    return None if mol is None else Chem.MolToSmiles(mol)


@lru_cache(maxsize=200_000)
def _facts(canonical: str) -> tuple[Counter, str] | None:
    """Composition and molecular formula of a canonical SMILES from one parse; ``None`` if RDKit refuses it.

    Cached (callers only read the Counter): every molecule of a reaction needs both, and reagents recur.
    """
    mol = Chem.MolFromSmiles(canonical)
    return None if mol is None else (fast_composition(mol), rdMolDescriptors.CalcMolFormula(mol))


def _known_facts(canonical: str) -> tuple[Counter, str]:
    facts = _facts(canonical)
    if facts is None:  # pragma: no cover - canonical_fragment and leftover_molecule only hand out readable SMILES
        raise ValueError(f"RDKit cannot read {canonical!r}")
    return facts


def _composition(canonical: str) -> Counter:
    return _known_facts(canonical)[0]


def _formula(canonical: str) -> str:
    return _known_facts(canonical)[1]


def clear_caches() -> None:
    """Forget every cached molecule (benchmarks time a cold start; forked workers inherit the caches)."""
    _canon_unmapped.cache_clear()
    _facts.cache_clear()


def fast_composition(mol: Chem.Mol) -> Counter:
    """:func:`chem.composition.mol_composition` without materialising the hydrogens (same counts, same order).

    ``AddHs`` appends one H atom per attached hydrogen after the heavy atoms, so the labels are the atoms in
    order, then ``H`` for their total hydrogen count (an explicit ``[H]`` atom keeps its place).
    """
    comp: Counter = Counter()
    n_h = 0
    for i in range(mol.GetNumAtoms()):
        atom = mol.GetAtomWithIdx(i)
        comp[atom_label(atom)] += 1
        n_h += atom.GetTotalNumHs()
    if n_h:
        comp["H"] += n_h
    return comp


def _side_composition(smiles: list[str]) -> Counter:
    """Atoms of a side in the order the generator met them: molecule by molecule, H appended per molecule."""
    total: Counter = Counter()
    for s in smiles:
        total.update(_composition(s))
    return total


def process_reaction(raw: RawReaction) -> dict[str, Any]:
    """Separate, balance and record one reaction: ``{"ok": True, ...}`` or ``{"ok": False, "reason": ...}``."""
    base = {"mit_index": raw.index}
    if ">>" not in raw.mapped:
        return {**base, "ok": False, "reason": SKIP_MALFORMED, "detail": "no '>>' in the reaction SMILES"}
    lhs, rhs = raw.mapped.split(">>", 1)
    product_maps = set(ATOM_MAP.findall(rhs))
    reactants: list[str] = []
    reagents: list[str] = []
    for frag in lhs.split("."):
        can = canonical_fragment(frag)
        if can is None:
            return {**base, "ok": False, "reason": SKIP_UNPARSABLE_REACTANTS, "detail": frag}
        if product_maps.intersection(ATOM_MAP.findall(frag)):
            reactants.append(can)
        else:
            reagents.append(can)
    if not reactants:
        return {
            **base,
            "ok": False,
            "reason": SKIP_NO_REACTANT,
            "detail": "no fragment maps into the product",
        }
    products: list[str] = []
    for frag in raw.target.split("."):
        can = canonical_fragment(frag)
        if can is None:
            return {**base, "ok": False, "reason": SKIP_UNPARSABLE_PRODUCT, "detail": frag}
        products.append(can)

    separated = {
        "separated_src": ".".join(reactants) + ">" + ".".join(reagents),
        "separated_tgt": ".".join(products),
    }
    res = balance_separated({**base, **separated}, reactants, reagents, products)
    if res["ok"]:
        res.update({"mapped": raw.mapped, "edits": raw.edits, "edits_proc": raw.edits_proc})
    return res


def balance_separated(
    base: dict[str, Any], reactants: list[str], reagents: list[str], products: list[str]
) -> dict[str, Any]:
    """The USPTO-BAL rules on a separated reaction (canonical SMILES that RDKit re-reads).

    Shared by USPTO-MIT and the extra sources so that both follow one rule set. The lists are extended in
    place by the leftover chains. ``formulas`` keeps first-seen order (reactants, reagents, products), so
    the written records do not depend on the process's string-hash seed.
    """
    r_comp = _side_composition(reactants)
    p_comp = _side_composition(products)
    leftover_p = leftover_r = None
    status = "balanced"
    if r_comp != p_comp:
        status = "rebalanced"
        extra_r = r_comp - p_comp  # atoms only on the reactant side -> a new product
        extra_p = p_comp - r_comp  # atoms only on the product side -> a new reactant
        if extra_r:
            leftover_p = leftover_molecule(extra_r)
            if leftover_p is None:
                return {**base, "ok": False, "reason": SKIP_LEFTOVER_REJECTED, "detail": "product-side chain"}
        if extra_p:
            leftover_r = leftover_molecule(extra_p)
            if leftover_r is None:
                return {
                    **base,
                    "ok": False,
                    "reason": SKIP_LEFTOVER_REJECTED,
                    "detail": "reactant-side chain",
                }
        if leftover_p is not None:
            products.append(leftover_p)
        if leftover_r is not None:
            reactants.append(leftover_r)
        if _side_composition(reactants) != _side_composition(products):
            return {**base, "ok": False, "reason": SKIP_RECHECK, "detail": ""}
    formulas = {s: _formula(s) for s in dict.fromkeys((*reactants, *reagents, *products))}
    return {
        **base,
        "ok": True,
        "status": status,
        "reactants": reactants,
        "reagents": reagents,
        "products": products,
        "leftover_product": leftover_p,
        "leftover_reactant": leftover_r,
        "formulas": formulas,
    }
