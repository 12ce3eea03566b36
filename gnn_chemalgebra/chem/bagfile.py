"""Reading bag files (one ``{k}MOL.{k}MOL`` bag per line) and ``gnnca predict`` input lines.

Every error is located as ``path:line: reason (term 'x')``. In non-strict mode bad lines are skipped
but counted, with their reasons, in a :class:`SkipReport`, so that nothing is lost silently.
"""

from __future__ import annotations

import gzip
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, TypeVar

from ..errors import InputError
from .bag import Bag, Term, parse_bag
from .molecule import REPRS, Repr, canonical, detect_repr, smiles_to_formula
from .smiles import mol_from_smiles, unmapped_canonical

E = TypeVar("E", bound=InputError)


def locate(err: E, path: str | None = None, line: int | None = None) -> E:
    """Copy of ``err`` with file and line filled in, keeping its class (``ChemistryError`` stays one)."""
    return type(err)(
        err.reason,
        path=err.path if err.path is not None else path,
        line=err.line if err.line is not None else line,
        term=err.term,
    )


@dataclass(frozen=True, slots=True)
class SkippedLine:
    """One line left out of a non-strict read, with the error that excluded it."""

    line: int
    reason: str
    term: str | None
    message: str


@dataclass(slots=True)
class SkipReport:
    """Lines skipped by a non-strict read: how many, and why."""

    skipped: list[SkippedLine] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.skipped)

    def by_reason(self) -> dict[str, list[int]]:
        """Reason -> line numbers, most frequent reason first."""
        groups: dict[str, list[int]] = {}
        for s in self.skipped:
            groups.setdefault(s.reason, []).append(s.line)
        return dict(sorted(groups.items(), key=lambda kv: -len(kv[1])))

    def reason_counts(self) -> Counter:
        return Counter(s.reason for s in self.skipped)

    def summary(self) -> str:
        """One line per reason, e.g. ``3 lines: empty term (...)``."""
        if not self.skipped:
            return "no line skipped"
        parts = [f"{len(lines)} line(s): {reason}" for reason, lines in self.by_reason().items()]
        return f"{self.count} line(s) skipped; " + "; ".join(parts)


@dataclass(slots=True)
class BagFileResult:
    """Result of a non-strict read: the good bags, their 1-based line numbers, and the skip report."""

    bags: list[Bag]
    line_numbers: list[int]
    skipped: SkipReport

    def __len__(self) -> int:
        return len(self.bags)


def _check_repr(repr: str) -> None:
    if repr not in REPRS:
        raise InputError(f"unknown representation {repr!r} (expected one of {', '.join(REPRS)})")


def _validate(terms: Bag, repr: Repr) -> None:
    for t in terms:
        canonical(t.mol, repr)


def _raw_lines(path: Path) -> list[bytes]:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as fh:
            return fh.read().splitlines()
    except (OSError, EOFError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise InputError(f"cannot read bag file: {reason}", path=str(path)) from None


def read_bag_file(
    path: str | Path,
    repr: Repr,
    *,
    validate_molecules: bool = True,
    default_coef: int | None = None,
    strict: bool = True,
) -> list[Bag] | BagFileResult:
    """Read one bag per line (``.gz`` files too).

    ``strict=True``: return the bags, raising a located :class:`InputError` (or :class:`ChemistryError`)
    on the first bad line. ``strict=False``: return a :class:`BagFileResult` with the good bags and a
    :class:`SkipReport` of the others. Molecules are checked with :func:`.molecule.canonical` unless
    ``validate_molecules`` is false; they are returned as written. Blank lines are errors.
    """
    _check_repr(repr)
    p = Path(path)
    bags: list[Bag] = []
    numbers: list[int] = []
    report = SkipReport()
    for i, raw in enumerate(_raw_lines(p), start=1):
        try:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"not UTF-8 text (byte {exc.start})") from None
            terms = parse_bag(text, default_coef=default_coef)
            if validate_molecules:
                _validate(terms, repr)
        except InputError as err:
            located = locate(err, str(p), i)
            if strict:
                raise located from None
            report.skipped.append(SkippedLine(i, err.reason, err.term, str(located)))
            continue
        bags.append(terms)
        numbers.append(i)
    if strict:
        return bags
    return BagFileResult(bags, numbers, report)


class ReactionInput(NamedTuple):
    """A parsed ``gnnca predict`` line: the source terms and their representation."""

    terms: list[Term]
    repr: Repr


def _reaction_terms(text: str, repr: Repr) -> list[Term]:
    parts = text.split(">")
    if len(parts) != 3:
        raise InputError(
            f"reaction SMILES needs exactly two '>' (reactants>reagents>products), found {len(parts) - 1}",
            term=text,
        )
    reactants, reagents, _products = parts  # products are ignored
    if reactants == "":
        raise InputError("reaction SMILES has no reactants before the first '>'", term=text)
    terms: list[Term] = []
    for side in (reactants, reagents):
        if side == "":
            continue
        for mol in side.split("."):
            if mol == "":
                raise InputError("empty molecule (two '.' in a row, or a leading/trailing '.')", term=side)
            if "{" in mol or "}" in mol:
                raise InputError("coefficients '{k}' are not allowed in reaction SMILES", term=mol)
            smi = unmapped_canonical(mol_from_smiles(mol))
            terms.append(Term(1, smiles_to_formula(smi) if repr == "formula" else smi))
    return terms


def parse_reaction_input(
    line: str,
    repr: Repr | None = None,
    *,
    path: str | None = None,
    lineno: int | None = None,
) -> ReactionInput:
    """Parse one ``gnnca predict`` input line into source terms.

    Accepted forms: a bag with or without coefficients (a missing ``{k}`` means 1), or a reaction SMILES
    ``reactants>reagents>``, ``reactants>>`` or ``reactants>reagents>products`` (products ignored; atom maps
    removed; every molecule gets coefficient 1, duplicates kept). Molecules come back canonical.
    ``repr=None`` detects the representation of a bag (reaction SMILES are SMILES); ``repr="formula"``
    turns reaction SMILES molecules into ``CalcMolFormula`` formulas.
    """
    try:
        if repr is not None:
            _check_repr(repr)
        text = line.strip()
        if text == "":
            raise InputError("empty line: nothing to predict from")
        if any(c.isspace() for c in text):
            raise InputError("whitespace inside the input line", term=text)
        if ">" in text:
            return ReactionInput(_reaction_terms(text, repr or "smiles"), repr or "smiles")
        terms = parse_bag(text, default_coef=1)
        use: Repr = repr if repr is not None else detect_repr([t.mol for t in terms])
        return ReactionInput([Term(t.coef, canonical(t.mol, use)) for t in terms], use)
    except InputError as err:  # ChemistryError included: locate keeps the class
        raise locate(err, path, lineno) from None
