"""Size limits of one ``gnnca predict`` input line: characters, molecules, heavy atoms per molecule and per line.

The edit model scores every pair of reactant atoms, so its work and memory grow with the square of a line's
atoms; a line far beyond the training data's largest cases is also beyond what the models learnt. The defaults
are the largest cases of the training data with a margin (``experiments/limits.md`` gives the measured maxima and the
command); ``--max-atoms``, ``--max-molecules``, ``--max-chars`` and ``--max-total-atoms`` raise them, 0 lifts one.

:func:`check_text` runs on the raw line before it is parsed (a 10 MB line is refused without being read by
RDKit); :func:`check_line` on the parsed terms. Both give one line saying which limit and by how much, with the
offending term (an :class:`~gnn_chemalgebra.errors.InputError` cuts a long one), or ``None``. Heavy atoms are
counted from the strings (no RDKit parse): SMILES by their atom tokens (hydrogen and dummy atoms are not heavy,
as for RDKit), formulas by their element counts without hydrogen.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import lru_cache

from ..errors import InputError
from .bag import Term
from .composition import CHARGE_KEY
from .formula import parse_formula

# About twice the largest case of the training data (experiments/limits.md: every src file of built/extra, whose largest
# line has 1,002 characters, 26 molecules, a molecule of 205 heavy atoms and 410 heavy atoms in all), rounded.
DEFAULT_MAX_CHARS = 2_000
DEFAULT_MAX_MOLECULES = 50
DEFAULT_MAX_ATOMS = 400
DEFAULT_MAX_TOTAL_ATOMS = 800
# Coefficients: the benchmark's are 1..10; an amount far beyond that makes the extent search enumerate every
# extent up to it (a coefficient of 10**13 asked for terabytes), so larger ones are refused.
DEFAULT_MAX_COEF = 1_000

FLAGS: dict[str, str] = {
    "max_chars": "--max-chars",
    "max_molecules": "--max-molecules",
    "max_atoms": "--max-atoms",
    "max_total_atoms": "--max-total-atoms",
    "max_coef": "--max-coef",
}

# One heavy SMILES atom: a bracket atom (its element read below) or an organic-subset atom, two-letter halogens
# first; the dummy atom ``*`` is not heavy (atomic number 0, as RDKit counts).
_SMILES_ATOM = re.compile(r"\[[^\]]*\]|Br|Cl|[BCNOPSFI]|[bcnops]")
# The element of a bracket atom: after the isotope, an upper-case symbol or a lower-case aromatic one.
_BRACKET_ELEMENT = re.compile(r"\[[0-9]*([A-Z][a-z]?|[a-z][a-z]?|\*)")
_HYDROGEN = frozenset({"H", "D", "T"})
_NOT_HEAVY = _HYDROGEN | {"*"}


@dataclass(frozen=True)
class Limits:
    """The largest line ``gnnca predict`` takes; 0 in a field lifts that limit."""

    max_atoms: int = DEFAULT_MAX_ATOMS  # heavy atoms in one molecule
    max_molecules: int = DEFAULT_MAX_MOLECULES  # molecules (terms) in one line
    max_chars: int = DEFAULT_MAX_CHARS  # characters in one line
    max_total_atoms: int = DEFAULT_MAX_TOTAL_ATOMS  # heavy atoms in one line, all molecules together
    max_coef: int = DEFAULT_MAX_COEF  # the largest coefficient of a term

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise InputError(f"{FLAGS[f.name]} must be a whole number >= 0 (0: no limit), got {v!r}")

    @classmethod
    def from_options(
        cls,
        max_atoms: int | None = None,
        max_molecules: int | None = None,
        max_chars: int | None = None,
        max_total_atoms: int | None = None,
        max_coef: int | None = None,
    ) -> Limits:
        """The defaults with the options given (``None``: the default) put in; a bad value is one line."""
        given = {
            "max_atoms": max_atoms,
            "max_molecules": max_molecules,
            "max_chars": max_chars,
            "max_total_atoms": max_total_atoms,
            "max_coef": max_coef,
        }
        return cls(**{k: v for k, v in given.items() if v is not None})

    @classmethod
    def none(cls) -> Limits:
        """No limit at all (the benchmark's own files, the Python API when asked)."""
        return cls(0, 0, 0, 0, 0)


@dataclass(frozen=True)
class LineSizes:
    """What the limits measure of one line; ``largest`` is the term with the most heavy atoms."""

    chars: int
    molecules: int
    max_atoms: int
    total_atoms: int
    largest: str


def smiles_heavy_atoms(smiles: str) -> int:
    """Heavy atoms of a SMILES string, counted from its atom tokens (equal to RDKit's ``GetNumHeavyAtoms`` on
    the strings RDKit accepts; never raises: any string has a count)."""
    return _smiles_heavy_cached(smiles) if len(smiles) <= _CACHED_CHARS else _smiles_heavy(smiles)


def formula_heavy_atoms(formula: str) -> int:
    """Heavy atoms of a formula (every element count but hydrogen's). Raises :class:`ChemistryError` (an
    :class:`InputError`) for a string that is not a formula."""
    return _formula_heavy_cached(formula) if len(formula) <= _CACHED_CHARS else _formula_heavy(formula)


def _smiles_heavy(smiles: str) -> int:
    n = 0
    for m in _SMILES_ATOM.finditer(smiles):
        tok = m.group()
        if tok[0] == "[":
            el = _BRACKET_ELEMENT.match(tok)
            if el is not None and el.group(1) in _NOT_HEAVY:
                continue
        n += 1
    return n


def _formula_heavy(formula: str) -> int:
    comp = parse_formula(formula, notation="extended")
    return sum(v for k, v in comp.items() if k != CHARGE_KEY and k not in _HYDROGEN)


# molecules repeat across lines (solvents, reagents): counts of strings up to this length are kept
_CACHED_CHARS = 512
_smiles_heavy_cached = lru_cache(maxsize=100_000)(_smiles_heavy)
_formula_heavy_cached = lru_cache(maxsize=100_000)(_formula_heavy)


def heavy_atoms(mol: str, repr: str) -> int:
    """Heavy atoms of one molecule string in ``repr`` (``smiles`` or ``formula``)."""
    if repr == "formula":
        return formula_heavy_atoms(mol)
    if repr == "smiles":
        return smiles_heavy_atoms(mol)
    raise InputError(f"unknown representation {repr!r} (expected smiles or formula)")


def line_sizes(text: str, terms: Sequence[Term] | Sequence[str], repr: str = "smiles") -> LineSizes:
    """The sizes of one line: its characters, its molecules (terms, or bare molecule strings) and their heavy
    atoms in ``repr``."""
    mols = [t.mol if isinstance(t, Term) else t for t in terms]
    atoms = [heavy_atoms(m, repr) for m in mols]
    k = max(range(len(atoms)), key=atoms.__getitem__) if atoms else -1
    return LineSizes(
        chars=len(text),
        molecules=len(mols),
        max_atoms=atoms[k] if atoms else 0,
        total_atoms=sum(atoms),
        largest=mols[k] if atoms else "",
    )


def _over(value: int, limit: int) -> bool:
    return limit > 0 and value > limit


def text_error(text: str, limits: Limits) -> InputError | None:
    """:func:`check_text` as an :class:`InputError` (reason and cut term apart), or ``None``."""
    if _over(len(text), limits.max_chars):
        return InputError(
            f"line has {len(text):,} characters, over the limit of {limits.max_chars:,} "
            f"(raise it with {FLAGS['max_chars']})",
            term=text,
        )
    return None


def limit_error(
    text: str, terms: Sequence[Term] | Sequence[str] | None, limits: Limits, repr: str = "smiles"
) -> InputError | None:
    """:func:`check_line` as an :class:`InputError` (reason and cut term apart, ready to be located), or
    ``None``."""
    err = text_error(text, limits)
    if err is not None or terms is None:
        return err
    mols = [t.mol if isinstance(t, Term) else t for t in terms]
    coefs = [t.coef for t in terms if isinstance(t, Term)]
    if coefs and _over(max(coefs), limits.max_coef):
        big = max(terms, key=lambda t: t.coef)
        return InputError(
            f"coefficient {big.coef:,} is over the limit of {limits.max_coef:,} (raise it with {FLAGS['max_coef']})",
            term=f"{{{big.coef}}}{big.mol}",
        )
    if _over(len(mols), limits.max_molecules):
        return InputError(
            f"line has {len(mols):,} molecules, over the limit of {limits.max_molecules:,} "
            f"(raise it with {FLAGS['max_molecules']})"
        )
    sizes = line_sizes(text, mols, repr)
    if _over(sizes.max_atoms, limits.max_atoms):
        return InputError(
            f"molecule has {sizes.max_atoms:,} heavy atoms, over the limit of {limits.max_atoms:,} "
            f"(raise it with {FLAGS['max_atoms']})",
            term=sizes.largest,
        )
    if _over(sizes.total_atoms, limits.max_total_atoms):
        return InputError(
            f"line has {sizes.total_atoms:,} heavy atoms in {len(mols):,} molecules, over the limit of "
            f"{limits.max_total_atoms:,} (raise it with {FLAGS['max_total_atoms']})"
        )
    return None


def check_text(text: str, limits: Limits) -> str | None:
    """Why the raw ``text`` of a line is over a limit before it is parsed (its characters), or ``None``."""
    err = text_error(text, limits)
    return None if err is None else str(err)


def check_line(
    text: str, terms: Sequence[Term] | Sequence[str] | None, limits: Limits, repr: str = "smiles"
) -> str | None:
    """Why the line ``text`` with the parsed ``terms`` (molecules in ``repr``) is over a limit, in one line
    naming the limit, the flag that raises it and the offending term (cut by :class:`InputError`); or
    ``None`` when it is within them. ``terms=None``: only the raw text is checked (:func:`check_text`).

    Checked in order of cost: characters, molecules, heavy atoms of the largest molecule, heavy atoms of the
    line. Raises only :class:`InputError` (a formula term that does not parse, an unknown ``repr``)."""
    err = limit_error(text, terms, limits, repr)
    return None if err is None else str(err)
