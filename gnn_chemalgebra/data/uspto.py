"""USPTO-MIT reactions -> the "separated" form -> USPTO-BAL base reactions (benchmark page, section 2).

One function, :func:`process_reaction`, does all the RDKit work for one reaction so that it can run in a
worker process; it returns either a base-reaction record or a skip reason, never raises for bad chemistry.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rdkit import Chem
from rdkit.Chem import rdMolDescriptors

from ..chem import leftover
from ..chem.composition import charge_suffix, mol_composition
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


def _read_lines(path: Path) -> list[str]:
    """A source file's lines (``.gz`` read through gzip); a file that is not gzip or not UTF-8 is one error line."""
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                return fh.read().splitlines()
        return path.read_text(encoding="utf-8").splitlines()
    except (gzip.BadGzipFile, EOFError, zlib.error):
        why = "not a readable gzip file (a .gz name on other content, or cut short)"
        raise InputError(why, path=str(path)) from None
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text (byte {e.start})", path=str(path)) from None


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
    mapped_lines = _read_lines(mapped_path)
    tgt_lines = _read_lines(tgt_path)
    proc_lines: list[str] | None = None
    if proc_path is not None:
        proc_lines = _read_lines(proc_path)
    if len(mapped_lines) != len(tgt_lines):
        raise InputError(
            f"{len(mapped_lines)} lines, but {tgt_path} has {len(tgt_lines)}: one target per reaction expected",
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
    A canonical SMILES that RDKit cannot re-read counts as refused. Each distinct string is parsed once
    (twice when it is not canonical yet: the re-read), and the composition and formula are kept from that
    parse (:func:`_known_facts`).
    """
    return _canonical_unmapped(ATOM_MAP.sub("]", smiles))


def _canonical_unmapped(unmapped: str) -> str | None:
    """:func:`canonical_fragment` of a fragment whose map numbers are already removed."""
    return _cached(_CANONICAL, unmapped, _canonicalise, unmapped)


# Caches: unmapped fragment -> canonical SMILES (or None), canonical SMILES -> facts (or None). Plain dicts
# (a hit is one lookup), emptied when they reach CACHE_LIMIT entries so a paper-size build stays bounded.
CACHE_LIMIT = 500_000
Facts = tuple[Counter, str]  # composition (labels in atom order, then H) and molecular formula
_CANONICAL: dict[str, str | None] = {}
_FACTS: dict[str, Facts | None] = {}
_LEFTOVER: dict[tuple[tuple[str, int], ...], str | None] = {}


def _remember(cache: dict, key: Any, value: Any) -> None:
    if len(cache) >= CACHE_LIMIT:
        cache.clear()
    cache[key] = value


def _cached(cache: dict, key: Any, make: Callable[[Any], Any], arg: Any) -> Any:
    """``cache[key]``, or ``make(arg)`` remembered under ``key``."""
    try:
        return cache[key]
    except KeyError:
        value = make(arg)
    _remember(cache, key, value)
    return value


def _canonicalise(unmapped: str) -> str | None:
    mol = Chem.MolFromSmiles(unmapped)
    if mol is None:
        return None
    can = Chem.MolToSmiles(mol)
    if can not in _FACTS:
        # The string was canonical already (most product targets are): the re-read is this very parse.
        _remember(_FACTS, can, _mol_facts(mol, can) if can == unmapped else _read_facts(can))
    return can if _FACTS[can] is not None else None  # RDKit must re-read what it wrote


def _read_facts(canonical: str) -> Facts | None:
    """Composition and molecular formula of a canonical SMILES from one parse; ``None`` if RDKit refuses it."""
    mol = Chem.MolFromSmiles(canonical)
    return None if mol is None else _mol_facts(mol, canonical)


def _mol_facts(mol: Chem.Mol, smiles: str) -> Facts:
    return smiles_order_composition(mol, smiles), rdMolDescriptors.CalcMolFormula(mol)


def _known_facts(canonical: str) -> Facts:
    """Facts of a SMILES that RDKit re-reads (cached; callers only read the Counter)."""
    facts = _cached(_FACTS, canonical, _read_facts, canonical)
    if facts is None:  # pragma: no cover - canonical_fragment and leftover_molecule only hand out readable SMILES
        raise ValueError(f"RDKit cannot read {canonical!r}")
    return facts


def _composition(canonical: str) -> Counter:
    return _known_facts(canonical)[0]


def formula_of(canonical: str) -> str:
    return _known_facts(canonical)[1]


def _leftover(diff: Counter) -> str | None:
    """:func:`leftover_molecule`, cached per ordered difference (the same few chains recur)."""
    return _cached(_LEFTOVER, tuple(diff.items()), leftover_molecule, diff)


def clear_caches() -> None:
    """Forget every cached molecule (benchmarks time a cold start; forked workers inherit the caches),
    the ``functools`` caches of :mod:`chem.leftover` (its chains) included."""
    _CANONICAL.clear()
    _FACTS.clear()
    _LEFTOVER.clear()
    _ATOM_LABELS.clear()
    for fn in vars(leftover).values():
        if callable(getattr(fn, "cache_clear", None)):
            fn.cache_clear()


# One atom of a SMILES string, in the order RDKit's parser numbers the atoms: a bracket atom or an atom of the
# organic subset (ring-closure digits, bonds and branches match nothing).
_SMILES_ATOM = re.compile(r"\[[^\]]*\]|Cl|Br|[BCNOPSFIbcnops*]")
# A bracket atom: isotope, symbol (aromatic in lower case), chirality and H count, charge, class.
_BRACKET_ATOM = re.compile(r"\[\d*([A-Z][a-z]?|[a-z][a-z]?|\*)[^\]+-]*([+-]+\d*)?(?::\d+)?\]")
_ATOM_LABELS: dict[str, tuple[str, int] | None] = {}  # atom token -> (label, formal charge), None: unreadable


def _charge(text: str) -> int:
    """``'+'`` 1, ``'++'`` 2, ``'+2'`` 2, ``'-3'`` -3, ``''`` 0 (a bracket atom's charge)."""
    if not text:
        return 0
    digits = text.lstrip("+-")
    n = int(digits) if digits else len(text)
    return n if text[0] == "+" else -n


def _token_label(token: str) -> tuple[str, int] | None:
    """``'c'`` -> ``('C', 0)``, ``'[O-]'`` -> ``('O-', -1)``, ``'[13CH3+]'`` -> ``('C+', 1)``."""
    if token[0] != "[":
        return token.capitalize(), 0
    m = _BRACKET_ATOM.fullmatch(token)
    if m is None:
        return None
    q = _charge(m.group(2))
    return m.group(1).capitalize() + charge_suffix(q), q


def smiles_order_composition(mol: Chem.Mol, smiles: str) -> Counter:
    """:func:`fast_composition` of ``mol`` read from the SMILES ``mol`` was parsed from (same counts and order).

    The labels come from the string (RDKit numbers atoms in the order they are written; counting the atom
    tokens first and then their labels keeps the labels' first-seen order), the hydrogens from RDKit's
    count. When the string's atoms do not line up with the molecule's (RDKit removed an explicit ``[H]``), a
    token is not understood, or the charges do not add up, :func:`fast_composition` reads the molecule.
    """
    tokens = _SMILES_ATOM.findall(smiles)
    if len(tokens) != mol.GetNumAtoms():
        return fast_composition(mol)
    comp: Counter = Counter()
    charge = 0
    for token, n in Counter(tokens).items():
        info = _cached(_ATOM_LABELS, token, _token_label, token)
        if info is None:
            return fast_composition(mol)
        comp[info[0]] += n
        charge += info[1] * n
    if charge != Chem.GetFormalCharge(mol):
        return fast_composition(mol)
    n_h = mol.GetNumAtoms(onlyExplicit=False) - len(tokens)
    if n_h:
        comp["H"] += n_h
    return comp


# The builder's fallback count is the shared one (hydrogens counted, not added; same counts and order as AddHs).
fast_composition = mol_composition


def side_composition(smiles: list[str]) -> Counter:
    """Atoms of a side in the order the generator met them: molecule by molecule, H appended per molecule."""
    total: Counter = Counter()
    for s in smiles:
        total.update(_composition(s))
    return total


def process_reaction(raw: RawReaction) -> dict[str, Any]:
    """Separate, balance and record one reaction: ``{"ok": True, ...}`` or ``{"ok": False, "reason": ...}``."""
    return with_sources(raw, separate_and_balance(raw))


def with_sources(raw: RawReaction, res: dict[str, Any]) -> dict[str, Any]:
    """A kept record gets its source lines (``mapped``, ``edits``, ``edits_proc``) as its last keys.

    Separate from :func:`separate_and_balance` so that worker processes never send these strings back."""
    if res["ok"]:
        res.update({"mapped": raw.mapped, "edits": raw.edits, "edits_proc": raw.edits_proc})
    return res


def separate_and_balance(raw: RawReaction) -> dict[str, Any]:
    """:func:`process_reaction` without the source lines of a kept record (see :func:`with_sources`)."""
    base = {"mit_index": raw.index}
    if ">>" not in raw.mapped:
        return {**base, "ok": False, "reason": SKIP_MALFORMED, "detail": "no '>>' in the reaction SMILES"}
    lhs, rhs = raw.mapped.split(">>", 1)
    product_maps = set(ATOM_MAP.findall(rhs))
    reactants: list[str] = []
    reagents: list[str] = []
    # One map-number removal per side (a map never spans a '.'), the map test only where a fragment has maps.
    for frag, unmapped in zip(lhs.split("."), ATOM_MAP.sub("]", lhs).split("."), strict=True):
        can = _canonical_unmapped(unmapped)
        if can is None:
            return {**base, "ok": False, "reason": SKIP_UNPARSABLE_REACTANTS, "detail": frag}
        if ":" in frag and product_maps.intersection(ATOM_MAP.findall(frag)):
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
    for frag, unmapped in zip(raw.target.split("."), ATOM_MAP.sub("]", raw.target).split("."), strict=True):
        can = _canonical_unmapped(unmapped)
        if can is None:
            return {**base, "ok": False, "reason": SKIP_UNPARSABLE_PRODUCT, "detail": frag}
        products.append(can)

    separated = {
        "separated_src": ".".join(reactants) + ">" + ".".join(reagents),
        "separated_tgt": ".".join(products),
    }
    return balance_separated({**base, **separated}, reactants, reagents, products)


def balance_separated(
    base: dict[str, Any], reactants: list[str], reagents: list[str], products: list[str]
) -> dict[str, Any]:
    """The USPTO-BAL rules on a separated reaction (canonical SMILES that RDKit re-reads).

    Shared by USPTO-MIT and the extra sources so that both follow one rule set. The lists are extended in
    place by the leftover chains. ``formulas`` keeps first-seen order (reactants, reagents, products), so
    the written records do not depend on the process's string-hash seed.
    """
    r_comp = side_composition(reactants)
    p_comp = side_composition(products)
    leftover_p = leftover_r = None
    status = "balanced"
    if r_comp != p_comp:
        status = "rebalanced"
        extra_r = r_comp - p_comp  # atoms only on the reactant side -> a new product
        extra_p = p_comp - r_comp  # atoms only on the product side -> a new reactant
        if extra_r:
            leftover_p = _leftover(extra_r)
            if leftover_p is None:
                return {**base, "ok": False, "reason": SKIP_LEFTOVER_REJECTED, "detail": "product-side chain"}
        if extra_p:
            leftover_r = _leftover(extra_p)
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
        if side_composition(reactants) != side_composition(products):
            return {**base, "ok": False, "reason": SKIP_RECHECK, "detail": ""}
    formulas = {s: formula_of(s) for s in dict.fromkeys((*reactants, *reagents, *products))}
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
