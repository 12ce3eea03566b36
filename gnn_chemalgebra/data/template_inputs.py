"""What ``gnnca data templates`` reads: the molecules the templates are applied to, and the products it must not write.

Substrates are the molecules of a benchmark build's training reactions (``BUILT/uspto_bal/reactions-train.jsonl``:
reactants, reagents and products, the artificial leftover left out), single neutral molecules RDKit reads, plus a
few simple ones (:data:`~gnn_chemalgebra.algebra.rules.template_parts.COMMON_SUBSTRATES`). The screen sets hold the
overlap key (:func:`~.extra.product_key`: canonical SMILES without maps, stereo or isotopes) of every product a
generated reaction may not have: every USPTO-MIT valid and test product (target and mapped product side, as the
extra builds screen), every product of the benchmark's own valid and test reactions, and the main products of both
parts of the textbook reactions.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rdkit import Chem

from ..algebra.rules.template_parts import COMMON_SUBSTRATES, canonical
from ..errors import InputError
from ..io import read_jsonl
from .extra import mit_product_keys, product_key

SCREEN_MIT = "uspto_mit_valid_test"
SCREEN_BENCHMARK = "benchmark_valid_test"
SCREEN_TEXTBOOK = "textbook"
MAX_HEAVY_ATOMS = 70


def read_build(built: Path) -> tuple[dict[str, Any], Path]:
    """The manifest of a ``gnnca data build`` folder and the source folder it was built from."""
    from .build import build_source_dir, read_build_manifest

    manifest = read_build_manifest(built)
    if not (built / "uspto_bal" / "reactions-train.jsonl").is_file():
        raise InputError("no uspto_bal/reactions-train.jsonl (not a gnnca data build folder)", path=str(built))
    return manifest, build_source_dir(manifest)


def _species(rec: dict[str, Any]) -> list[str]:
    """A record's molecules without the artificial leftover chains the builder appends."""
    reactants = list(rec.get("reactants", []))
    products = list(rec.get("products", []))
    if rec.get("leftover_reactant") is not None:
        reactants = reactants[:-1]
    if rec.get("leftover_product") is not None:
        products = products[:-1]
    return [*reactants, *rec.get("reagents", []), *products]


def substrate_pool(built: Path) -> list[str]:
    """Sorted canonical SMILES of the single neutral molecules of ``built``'s training reactions and the common
    substrates."""
    found: set[str] = set()
    for rec in read_jsonl(built / "uspto_bal" / "reactions-train.jsonl"):
        found.update(s for s in _species(rec) if "." not in s and "->" not in s and "<-" not in s)
    found.update(COMMON_SUBSTRATES)
    return _usable(found)


def derived_pool(products: list[str], pool: list[str]) -> list[str]:
    """Sorted usable molecules among ``products`` (a first round's main products) that are not in ``pool``."""
    return _usable(set(products) - set(pool))


def _usable(found: set[str]) -> list[str]:
    """The single neutral molecules without radicals of 2 to :data:`MAX_HEAVY_ATOMS` heavy atoms, canonical."""
    out = set()
    for s in found:
        mol = Chem.MolFromSmiles(s)
        if mol is None or Chem.GetFormalCharge(mol) != 0 or not 2 <= mol.GetNumHeavyAtoms() <= MAX_HEAVY_ATOMS:
            continue
        if any(a.GetNumRadicalElectrons() for a in mol.GetAtoms()):
            continue
        can = canonical(s)
        if can is not None:
            out.add(can)
    return sorted(out)


def _keys_of(smiles: list[str]) -> set[str]:
    out = set()
    for s in smiles:
        mol = Chem.MolFromSmiles(s)
        if mol is not None:
            out.add(product_key(mol))
    return out


def screen_sets(
    built: Path, src_dir: Path, *, workers: int = 1, log: Callable[[str], None] = print
) -> dict[str, set[str]]:
    """The overlap keys of every product a generated reaction may not have, by where they come from."""
    from .textbook import read_textbook
    from .uspto import read_split

    mit_lines: list[str] = []
    for split in ("valid", "test"):
        for raw in read_split(src_dir, split, None):
            mit_lines += [raw.target, raw.mapped.split(">")[-1]]
    bench: list[str] = []
    for split in ("valid", "test"):
        for rec in read_jsonl(built / "uspto_bal" / f"reactions-{split}.jsonl"):
            products = list(rec.get("products", []))
            bench += products[:-1] if rec.get("leftover_product") is not None else products
    textbook = [m for row in read_textbook("all") for m in row.main.split(".") if m]
    sets = {
        SCREEN_MIT: mit_product_keys(mit_lines, workers),
        SCREEN_BENCHMARK: _keys_of(bench),
        SCREEN_TEXTBOOK: _keys_of(textbook),
    }
    log("templates: screen sets " + ", ".join(f"{k} {len(v):,} products" for k, v in sets.items()))
    return sets
