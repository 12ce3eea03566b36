"""The textbook reactions (``data/textbook/*.tsv``): rows read and checked, and each row's input line and expected
line in the three styles a user writes (a SMILES bag, a formula bag, a reaction SMILES with its main products).

A row holds the reactants as a chemist writes them (``{k}`` only where a chemist writes a coefficient; a bare
molecule counts once) and the balanced outcome: every molecule that leaves the flask, real by-products included,
and every reagent, catalyst or spectator ion of the input written back unconsumed. Reactants and outcome must have
the same atoms and charge; a row that does not is refused with its file and line, so added reactions are checked
when they are read.
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass
from math import gcd
from pathlib import Path

from ..chem.bag import Term, format_bag, parse_bag
from ..chem.molecule import bag_composition, smiles_to_formula
from ..chem.smiles import try_canonical
from ..errors import InputError

COLUMNS = ("id", "class", "area", "reactants", "outcome", "main", "note")
PARTS = ("dev", "held_out")
STYLES = ("smiles", "formula", "reaction")
AREAS = ("organic", "general")
DEFAULT_DIR = Path(__file__).resolve().parents[2] / "data" / "textbook"


@dataclass(frozen=True)
class TextbookReaction:
    """One row: ``reactants`` as written (bare or ``{k}`` terms), ``outcome`` the balanced products with
    coefficients, ``main`` the main product(s) a reaction SMILES names after ``>>``."""

    id: str
    cls: str
    area: str
    reactants: str
    outcome: str
    main: str
    note: str
    part: str

    def terms(self) -> list[Term]:
        return parse_bag(self.reactants, default_coef=1)

    def outcome_terms(self) -> list[Term]:
        return parse_bag(self.outcome)

    def spectators(self) -> list[Term]:
        """Reactants written back unchanged (a catalyst, a spectator ion): the same molecule and amount in the
        outcome. In a reaction SMILES they are the reagents between the arrows."""
        out = {_key(t.mol): t.coef for t in self.outcome_terms()}
        return [t for t in self.terms() if out.get(_key(t.mol)) == t.coef]

    def source(self, style: str) -> str:
        """The input line of ``style``: the bag as written, the same bag as formulas (RDKit's CalcMolFormula), or
        ``consumed>reagents>main`` (a reaction SMILES names species, not amounts; a reagent present k times is
        written k times)."""
        if style == "smiles":
            return self.reactants
        if style == "formula":
            pieces = self.reactants.split(".")
            return ".".join(_formula_piece(p) for p in pieces)
        if style == "reaction":
            kept = {_key(t.mol) for t in self.spectators()}
            consumed = [t.mol for t in self.terms() if _key(t.mol) not in kept]
            reagents = [t.mol for t in self.spectators() for _ in range(t.coef)]
            return f"{'.'.join(consumed)}>{'.'.join(reagents)}>{self.main}"
        raise InputError(f"unknown style {style!r} (expected one of {', '.join(STYLES)})")

    def expected(self, style: str) -> str:
        """The line a chemist expects back for ``style``: the outcome (as formulas for a formula bag, molecules of
        the same formula merged). A reaction SMILES carries no amounts, so its reaction is written at the smallest
        integer coefficients and its reagents as often as the line names them."""
        if style == "smiles":
            return self.outcome
        if style == "formula":
            merged: Counter = Counter()
            for t in self.outcome_terms():
                merged[smiles_to_formula(t.mol)] += t.coef
            return format_bag(Term(k, m) for m, k in merged.items())
        if style == "reaction":
            kept = {_key(t.mol) for t in self.spectators()}
            made = [t for t in self.outcome_terms() if _key(t.mol) not in kept]
            used = [t.coef for t in self.terms() if _key(t.mol) not in kept]
            g = 0
            for k in used + [t.coef for t in made]:
                g = gcd(g, k)
            return format_bag([*self.spectators(), *(Term(t.coef // g, t.mol) for t in made)])
        raise InputError(f"unknown style {style!r} (expected one of {', '.join(STYLES)})")


def _key(smiles: str) -> str:
    return try_canonical(smiles) or smiles


def _formula_piece(piece: str) -> str:
    """One written term as a formula, its ``{k}`` kept only where it was written."""
    if piece.startswith("{"):
        coef, mol = piece[1:].split("}", 1)
        return f"{{{coef}}}{smiles_to_formula(mol)}"
    return smiles_to_formula(piece)


def read_part(part: str, folder: Path = DEFAULT_DIR) -> list[TextbookReaction]:
    """The rows of ``folder/<part>.tsv``, each checked (see :func:`check_row`)."""
    if part not in PARTS:
        raise InputError(f"unknown part {part!r} (expected one of {', '.join(PARTS)})")
    path = folder / f"{part}.tsv"
    if not path.is_file():
        raise InputError("no textbook reactions file", path=str(path))
    rows: list[TextbookReaction] = []
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None or tuple(header) != COLUMNS:
            raise InputError(f"the header must be the columns {', '.join(COLUMNS)}", path=str(path), line=1)
        for n, fields in enumerate(reader, start=2):
            if not fields:
                continue
            if len(fields) != len(COLUMNS):
                raise InputError(f"{len(fields)} tab-separated fields, expected {len(COLUMNS)}", path=str(path), line=n)
            row = TextbookReaction(*(f.strip() for f in fields), part=part)  # type: ignore[call-arg]
            try:
                check_row(row)
            except InputError as err:
                raise err.located(str(path), n) from None
            rows.append(row)
    return rows


def read_textbook(part: str = "all", folder: Path = DEFAULT_DIR) -> list[TextbookReaction]:
    """The rows of one part, or of both (``all``); an id or a reactant bag in two rows is refused."""
    names = PARTS if part == "all" else (part,)
    rows = [r for p in names for r in read_part(p, folder)]
    seen: dict[object, str] = {}
    for r in rows:
        for key in (r.id, frozenset((_key(t.mol), t.coef) for t in r.terms())):
            if key in seen:
                raise InputError(f"row {r.id} repeats row {seen[key]} (same id or same reactants)", path=str(folder))
            seen[key] = r.id
    return rows


def check_row(row: TextbookReaction) -> None:
    """Refuse a row that a bench could not score fairly: an empty field, an unknown area, a molecule RDKit rejects,
    an outcome whose atoms or charge differ from the reactants', a main product that is not in the outcome or that
    the reaction does not make."""
    for name in ("id", "class", "reactants", "outcome", "main"):
        if not getattr(row, name if name != "class" else "cls"):
            raise InputError(f"empty column {name!r}")
    if row.area not in AREAS:
        raise InputError(f"area must be one of {', '.join(AREAS)}, got {row.area!r}")
    if any(not c.isalnum() and c not in "_-" for c in row.id):
        raise InputError(f"id {row.id!r} may hold letters, digits, '_' and '-' only")
    for what, line in (("reactants", row.reactants), ("outcome", row.outcome), ("main", row.main)):
        for t in parse_bag(line, default_coef=None if what == "outcome" else 1):
            if try_canonical(t.mol) is None:
                raise InputError(f"{what}: RDKit cannot read the molecule", term=t.mol)
    src, out = bag_composition(row.reactants, "smiles"), bag_composition(row.outcome, "smiles")
    if src != out:
        short, extra = dict(sorted((src - out).items())), dict(sorted((out - src).items()))
        raise InputError(f"{row.id}: the outcome does not balance the reactants (missing {short}, extra {extra})")
    made = {_key(t.mol) for t in row.outcome_terms()} - {_key(t.mol) for t in row.spectators()}
    for t in parse_bag(row.main, default_coef=1):
        if _key(t.mol) not in made:
            raise InputError(f"{row.id}: a main product must be made by the reaction", term=t.mol)
