"""Reading the lines that :mod:`.metrics` scores: a model's prediction leniently, a target or source strictly,
each molecule by the key two molecules must share to match (``paper`` or ``strict`` mode, see :mod:`.metrics`),
and the element balance of a prediction against its source (the VAL and BAL/DEF/EXC/D+E/CHG rates)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from ..chem.bag import Term, parse_bag, parse_term
from ..chem.composition import CHARGE_KEY
from ..chem.formula import parse_formula, write_formula
from ..chem.molecule import Repr, composition
from ..chem.smiles import try_canonical
from ..errors import ChemistryError, InputError

Mode = Literal["paper", "strict"]

# Prefix of the matching key of an unparsable predicted molecule (strict mode): no canonical SMILES or
# formula starts with a NUL, so such a key can never match a target molecule.
UNPARSABLE = "\x00"


# --------------------------------------------------------------------------- parsing lines
@lru_cache(maxsize=200_000)
def _smiles_key(smiles: str) -> str | None:
    # Caches failures too (canonical_smiles only caches successes): models repeat the same bad SMILES.
    return try_canonical(smiles)


@lru_cache(maxsize=200_000)
def _formula_canonical(formula: str) -> str | None:
    try:
        return write_formula(parse_formula(formula))
    except ChemistryError:
        return None


def molecule_key(mol: str, repr: Repr, mode: Mode) -> str | None:
    """The string two molecules must share to match, or ``None`` when the molecule does not parse.

    Paper-mode formulas are compared as written, so their key is the string itself (never ``None``).
    """
    if repr == "smiles":
        return _smiles_key(mol) if mol else None
    if mode == "paper":
        return mol
    return _formula_canonical(mol)


def molecule_parses(mol: str, repr: Repr) -> bool:
    """Whether the molecule is readable in its representation (mode-independent; used by VAL)."""
    if not mol:
        return False
    if repr == "smiles":
        return _smiles_key(mol) is not None
    return _formula_canonical(mol) is not None


def _split_term(piece: str) -> tuple[int | None, str] | None:
    """``(coef, mol)`` of one prediction term; coef ``None`` for a bare ``MOL``; ``None`` for an empty term.

    Raises :class:`InputError` on broken coefficient syntax only; ``{3}`` with nothing after it is a
    well-formed coefficient followed by an (unparsable) empty molecule.
    """
    if piece == "":
        return None
    if not piece.startswith("{") and "{" not in piece and "}" not in piece:
        return None, piece
    if piece.startswith("{") and piece.endswith("}") and piece.count("{") == 1 and piece.count("}") == 1:
        return parse_term(piece + "*").coef, ""  # validates the coefficient; the molecule is empty
    t = parse_term(piece)
    return t.coef, t.mol


@dataclass(slots=True)
class ParsedPrediction:
    """A prediction line: scoring terms (matching keys), the raw readable terms, and validity."""

    terms: list[Term]
    raw: list[Term]
    valid: bool


def parse_prediction(
    line: str,
    repr: Repr,
    mode: Mode = "paper",
    *,
    path: str | None = None,
    line_no: int | None = None,
) -> ParsedPrediction:
    """Read a model's prediction leniently (a wrong molecule is a wrong answer, see the module doc)."""
    text = "".join(line.split())
    terms: list[Term] = []
    raw: list[Term] = []
    valid = text != ""
    for piece in text.split(".") if text else ():
        try:
            parsed = _split_term(piece)
        except InputError as err:
            raise err.located(path, line_no) from None
        if parsed is None:
            valid = False
            continue
        coef, mol = parsed
        if coef is None:
            valid = False
            if mode == "paper":
                continue
            coef = 1
        if not molecule_parses(mol, repr):
            valid = False
        else:
            raw.append(Term(coef, mol))
        key = molecule_key(mol, repr, mode)
        if key is None:
            if mode == "paper":
                continue
            key = UNPARSABLE + mol
        terms.append(Term(coef, key))
    return ParsedPrediction(terms, raw, valid)


def parse_reference(
    line: str,
    repr: Repr,
    mode: Mode = "paper",
    *,
    path: str | None = None,
    line_no: int | None = None,
    what: str = "target",
) -> list[Term]:
    """Read a target (or source) line strictly: any defect is an :class:`InputError` with file and line."""
    terms = parse_bag(line, path=path, line=line_no)
    out: list[Term] = []
    for t in terms:
        key = molecule_key(t.mol, repr, mode) if molecule_parses(t.mol, repr) else None
        if key is None:
            hint = "RDKit cannot parse it" if repr == "smiles" else "not a molecular formula"
            raise ChemistryError(f"{what} molecule is not valid {repr} ({hint})", path=path, line=line_no, term=str(t))
        out.append(Term(t.coef, key))
    return out


# --------------------------------------------------------------------------- balance rates
def bag_composition(terms: Sequence[Term], repr: Repr) -> Counter:
    """Coefficient-weighted element counts and net charge of readable terms."""
    total: Counter = Counter()
    for t in terms:
        for label, n in composition(t.mol, repr).items():
            total[label] += n * t.coef
    return total


def balance_class(pred: Counter, src: Counter) -> str:
    """One of ``BAL``, ``DEF``, ``EXC``, ``D+E``, ``CHG`` (see the module doc)."""
    elements = (set(pred) | set(src)) - {CHARGE_KEY}
    deficit = any(pred.get(e, 0) < src.get(e, 0) for e in elements)
    excess = any(pred.get(e, 0) > src.get(e, 0) for e in elements)
    if deficit and excess:
        return "D+E"
    if deficit:
        return "DEF"
    if excess:
        return "EXC"
    return "BAL" if pred.get(CHARGE_KEY, 0) == src.get(CHARGE_KEY, 0) else "CHG"


def source_composition(line: str, repr: Repr, *, path: str | None = None, line_no: int | None = None) -> Counter:
    """Composition of a source (input) line, which must be fully valid."""
    terms = parse_bag(line, path=path, line=line_no)
    for t in terms:
        if not molecule_parses(t.mol, repr):
            raise ChemistryError(f"source molecule is not valid {repr}", path=path, line=line_no, term=str(t))
    return bag_composition(terms, repr)
