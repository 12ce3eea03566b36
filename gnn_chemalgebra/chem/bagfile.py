"""Reading bag files (one ``{k}MOL.{k}MOL`` bag per line) and ``gnnca predict`` input lines (the one parser).

Every error is located as ``path:line: reason (term 'x')``. In non-strict mode bad lines are skipped
but counted, with their reasons, in a :class:`SkipReport`, so that nothing is lost silently.
"""

from __future__ import annotations

import gzip
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple, TypeVar

from ..errors import InputError, cut
from .bag import Bag, Term, parse_bag
from .formula import FORMULA_UNICODE
from .molecule import REPRS, Repr, canonical
from .reaction import ReactionSides, ReactionTerms, given_sides, make_sides
from .smiles import shared_mol, unmapped_canonical
from .text import WHITESPACE, foreign_char

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


# --------------------------------------------------------------------------- ``gnnca predict`` input lines
INPUT_REPRS: tuple[str, ...] = ("auto", *REPRS)
_ARROW = re.compile(r"(?<!-)>")  # '->' is a dative bond, not a reaction arrow
_COUNT_OF_ONE = re.compile(r"[A-Z][a-z]?1(?!\d)")  # 'C1' in 'C1CC': a SMILES ring digit, never a formula count


class ReactionInput(NamedTuple):
    """A parsed ``gnnca predict`` line: the source terms (molecules canonical) and their representation. A reaction
    line's terms are a :class:`~.reaction.ReactionTerms` carrying its sides (:attr:`sides`), so the roles they give
    go wherever the terms go."""

    terms: list[Term]
    repr: Repr

    @property
    def sides(self) -> ReactionSides | None:
        """The reactants, reagents and products a reaction line wrote (``None``: a bag)."""
        return given_sides(self.terms)


@dataclass(frozen=True, slots=True)
class LineReading:
    """Both ways one input line can be read: as SMILES and as formulas, each with the reading or why not.

    ``formula_plausible`` is false when the line only *happens* to parse as formulas: a term is valid SMILES and
    not a canonical formula (``CCO``, ``C1CC1``), so ``auto`` never reads the line as formulas."""

    smiles: ReactionInput | None
    formula: ReactionInput | None
    smiles_error: InputError | None
    formula_error: InputError | None
    formula_plausible: bool = True

    @property
    def kind(self) -> str | None:
        """``smiles`` / ``formula`` (only that reading), ``both``, or ``None`` (neither)."""
        s, f = self.smiles is not None, self.formula is not None and self.formula_plausible
        return "both" if s and f else "smiles" if s else "formula" if f else None


def _why(err: InputError | None) -> str:
    if err is None:
        return "not readable"
    return err.reason + (f" (term {cut(err.term)!r})" if err.term is not None else "")


def _bag_terms(text: str) -> tuple[list[Term], tuple[int, int] | None]:
    """The raw terms of a line and, for a reaction line, where its reagents and its products start among them
    (reactants, reagents, products in written order); errors that no representation can fix."""
    body = text.strip()
    if body == "":
        raise InputError("empty line: nothing to predict from")
    if WHITESPACE.search(body):
        raise InputError("whitespace inside the input line", term=body)
    foreign = foreign_char(text, FORMULA_UNICODE)
    if foreign is not None:
        raise InputError(
            f"{foreign} is not ASCII: SMILES and formulas are ASCII (formulas may add subscripts and hydrate dots)"
        )
    if not _ARROW.search(body):
        return parse_bag(body, default_coef=1), None
    parts = _ARROW.split(body)
    if len(parts) != 3:
        raise InputError(
            f"reaction SMILES needs exactly two '>' (reactants>reagents>products), found {len(parts) - 1}", term=body
        )
    if parts[0] == "":
        raise InputError("reaction SMILES has no reactants before the first '>'", term=body)
    terms: list[Term] = []
    starts: list[int] = []
    for side in parts:
        starts.append(len(terms))
        if side == "":
            continue
        for mol in side.split("."):
            if mol == "":
                raise InputError("empty molecule (two '.' in a row, or a leading/trailing '.')", term=side)
            if "{" in mol or "}" in mol:
                raise InputError("coefficients '{k}' are not allowed in reaction SMILES; write a bag", term=mol)
            terms.append(Term(1, mol))
    return terms, (starts[1], starts[2])


@lru_cache(maxsize=200_000)
def _smiles_reading(mol: str) -> tuple[str | None, tuple | None]:
    """A term's canonical SMILES without atom maps, or how RDKit refused it (the error's class and fields): one
    RDKit parse per distinct string of an input, however often the string recurs (reagents, every term of a
    formula file)."""
    try:
        parsed = shared_mol(mol)
        if any(a.GetAtomicNum() == 0 for a in parsed.GetAtoms()):
            raise InputError("dummy atom '*' is not a real atom: write the molecule in full", term=mol)
        return unmapped_canonical(parsed), None  # reads a copy: the shared parse stays as parsed
    except InputError as err:
        return None, (type(err), err.reason, err.path, err.line, err.term)


def _smiles_terms(terms: list[Term]) -> tuple[list[str | None], InputError | None]:
    """Each term's canonical SMILES without atom maps (``None`` where RDKit refuses it) and the first refusal."""
    out: list[str | None] = []
    first: InputError | None = None
    for t in terms:
        canon, refused = _smiles_reading(t.mol)
        out.append(canon)
        if refused is not None and first is None:
            cls, reason, path, line, term = refused
            first = cls(reason, path=path, line=line, term=term)  # a fresh error, as an uncached reading raises
    return out, first


def _as_formula(terms: list[Term]) -> ReactionInput:
    return ReactionInput([Term(t.coef, canonical(t.mol, "formula")) for t in terms], "formula")


def read_line(text: str) -> LineReading:
    """Read one line both ways. Raises :class:`InputError` for faults of the line itself (empty, whitespace,
    bag syntax, a malformed reaction SMILES), which no choice of representation repairs. A reaction line is read as
    formulas only when its molecules are written as formulas (``C2H3ClO>C6H15N>``)."""
    terms, at = _bag_terms(text)
    formula = f_err = None
    canon, s_err = _smiles_terms(terms)
    smiles = None
    if s_err is None:
        smiles = ReactionInput([Term(t.coef, str(c)) for t, c in zip(terms, canon, strict=True)], "smiles")
    try:
        formula = _as_formula(terms)
    except InputError as err:
        f_err = err
    plausible = formula is not None and all(
        f.mol == t.mol or c is None for f, t, c in zip(formula.terms, terms, canon, strict=True)
    )
    if formula is not None and s_err is not None and any(_COUNT_OF_ONE.search(t.mol) for t in terms):
        # 'C1CC' is a broken SMILES ring, not the formula C3: a formula never writes a count of 1
        f_err = InputError("reads as a formula only through a count of 1, which a formula never writes")
        formula, plausible = None, False
    if at is not None:
        parsed = (smiles is not None, formula is not None and plausible)
        smiles, s_err = _with_sides(smiles, s_err, at)
        if not plausible:
            formula, f_err = None, f_err or InputError("a reaction SMILES ('>') is SMILES, not formulas")
        formula, f_err = _with_sides(formula, f_err, at)
        for read_ok, err in zip(parsed, (s_err, f_err), strict=True):
            if read_ok and smiles is None and formula is None and err is not None:
                raise err  # its molecules read one way, its sides cannot be: a fault of the line itself
    return LineReading(smiles, formula, s_err, f_err, plausible)


def _with_sides(
    read: ReactionInput | None, err: InputError | None, at: tuple[int, int]
) -> tuple[ReactionInput | None, InputError | None]:
    """A reaction line's reading as source terms (reactants, reagents) carrying its sides, or why it cannot be one
    (a molecule on two sides, an element of the products that no reactant supplies)."""
    if read is None:
        return None, err
    mols = [t.mol for t in read.terms]
    try:
        sides = make_sides(mols[: at[0]], mols[at[0] : at[1]], mols[at[1] :], read.repr)
    except InputError as refused:
        return None, refused
    return ReactionInput(ReactionTerms(read.terms[: at[1]], sides), read.repr), None


def _reading(r: LineReading, repr: Repr) -> ReactionInput:
    """The line read in ``repr``, or the error that says why it cannot be."""
    got = r.smiles if repr == "smiles" else r.formula
    if got is not None:
        return got
    err = r.smiles_error if repr == "smiles" else r.formula_error
    if err is not None:
        raise err
    raise InputError(f"not readable as {repr}")  # pragma: no cover - a failed reading keeps its error


def _own_reading(r: LineReading) -> ReactionInput:
    """``auto`` on a lone line: SMILES when it reads as SMILES, else formulas, else both reasons."""
    kind = r.kind
    if kind in ("smiles", "both"):
        return _reading(r, "smiles")
    if kind == "formula":
        return _reading(r, "formula")
    raise InputError(f"neither SMILES ({_why(r.smiles_error)}) nor formulas ({_why(r.formula_error)})")


def parse_reaction_input(
    line: str,
    repr: str | None = None,
    *,
    path: str | None = None,
    lineno: int | None = None,
) -> ReactionInput:
    """Parse one ``gnnca predict`` input line into source terms (the one parser of predict's input).

    Accepted forms: a bag with or without coefficients (a missing ``{k}`` means 1), or a reaction SMILES
    ``reactants>reagents>``, ``reactants>>`` or ``reactants>reagents>products`` (atom maps removed; the source
    terms are the reactants and reagents, coefficient 1 each, duplicates kept; the sides travel with them as
    :attr:`ReactionInput.sides`: reagents are never consumed and given products are completed with by-products,
    see ``docs/reaction_smiles.md``; ``->`` is a dative bond, not an arrow).
    Molecules come back canonical. ``repr`` ``None``/``auto`` reads the line as SMILES when it can, else as
    formulas (see :func:`read_reaction_lines` for a whole file, where one SMILES line makes the file SMILES).
    """
    try:
        if repr not in (None, *INPUT_REPRS):
            raise InputError(f"unknown representation {repr!r} (expected one of {', '.join(INPUT_REPRS)})")
        r = read_line(line)
        return _own_reading(r) if repr in (None, "auto") else _reading(r, repr)  # type: ignore[arg-type]
    except InputError as err:  # ChemistryError included: locate keeps the class
        raise locate(err, path, lineno) from None


@dataclass(slots=True)
class ReactionLines:
    """The readable lines of a predict input (1-based numbers), the refused ones (located errors, file order)
    and the input's representation (``None`` when no line is readable)."""

    inputs: list[tuple[int, ReactionInput]]
    refused: list[InputError]
    repr: Repr | None


def _file_repr(readings: dict[int, LineReading]) -> tuple[Repr | None, int | None]:
    """SMILES when any line reads only as SMILES (a formula reading of a SMILES file is never taken), else
    formulas when any line reads only as formulas, else SMILES (every line is both, e.g. ``CO``); with the line
    that decided it."""
    for want in ("smiles", "formula"):
        for n, r in readings.items():
            if r.kind == want:
                return want, n  # type: ignore[return-value]
    for n, r in readings.items():
        if r.kind == "both":
            return "smiles", n
    return None, None


def read_reaction_lines(
    lines: Iterable[str],
    repr: str = "auto",
    *,
    path: str | None = None,
    skip_invalid: bool = False,
) -> ReactionLines:
    """Read a predict input: blank lines and ``#`` comments are passed over; every other line is a reaction.

    ``repr="auto"`` decides per line but keeps the file in one representation: one line that reads only as
    SMILES makes the input SMILES, and a line that then reads only as formulas is refused as a mixed input,
    naming both lines. Without ``skip_invalid`` the first refused line raises its located :class:`InputError`;
    with it, refused lines are returned with their reasons (nothing is dropped silently).
    """
    if repr not in INPUT_REPRS:
        raise InputError(f"--repr must be one of {', '.join(INPUT_REPRS)}, got {repr!r}")
    readings: dict[int, LineReading] = {}
    refused: list[InputError] = []
    for i, text in enumerate(lines, start=1):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        try:
            readings[i] = read_line(text)
        except InputError as err:
            refused.append(locate(err, path, i))
    decider: int | None = None
    use: Repr | None = repr if repr != "auto" else None  # type: ignore[assignment]
    if use is None:
        use, decider = _file_repr(readings)
    inputs: list[tuple[int, ReactionInput]] = []
    for i, r in readings.items():
        try:
            if use is None:
                raise InputError(f"neither SMILES ({_why(r.smiles_error)}) nor formulas ({_why(r.formula_error)})")
            if decider is not None and use == "smiles" and r.kind == "formula":
                raise InputError(
                    f"not SMILES ({_why(r.smiles_error)}) in a SMILES input (line {decider} reads only as SMILES); "
                    "the line reads as formulas: mixed representations (pass --repr formula for formula input)"
                )
            if decider is not None and r.kind is None:
                raise InputError(f"neither SMILES ({_why(r.smiles_error)}) nor formulas ({_why(r.formula_error)})")
            inputs.append((i, _reading(r, use)))
        except InputError as err:
            refused.append(locate(err, path, i))
    refused.sort(key=lambda e: e.line or 0)
    if refused and not skip_invalid:
        raise refused[0]
    return ReactionLines(inputs, refused, use)
