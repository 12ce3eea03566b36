"""Stoichiometric bags ``{k}MOL.{k}MOL``: parsing and writing, representation-agnostic.

Molecule strings are not validated here (see :mod:`.molecule`); this module only owns the
``{k}`` syntax so that broken coefficients are always an error, whatever the representation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..errors import InputError
from .text import WHITESPACE

_TERM = re.compile(r"^\{([^{}]*)\}(.*)$", re.DOTALL)
_POSITIVE_INT = re.compile(r"[0-9]+")
# Coefficients fit a signed 64-bit integer (tensors), and int() never meets a huge digit string.
MAX_COEF = 2**63 - 1


@dataclass(frozen=True, slots=True)
class Term:
    """One ``{coef}mol`` term of a bag."""

    coef: int
    mol: str

    def __str__(self) -> str:
        return f"{{{self.coef}}}{self.mol}"


Bag = list[Term]


def parse_term(text: str, *, default_coef: int | None = None) -> Term:
    """Parse one ``{k}MOL`` term; ``default_coef`` allows a bare ``MOL`` (used by ``gnnca predict``)."""
    if text == "":
        raise InputError("empty term (two '.' in a row, or a leading/trailing '.')", term=text)
    if WHITESPACE.search(text):
        raise InputError("whitespace inside a term", term=text)
    if not text.startswith("{"):
        if "{" in text or "}" in text:
            raise InputError("misplaced brace: a term must start with '{k}'", term=text)
        if default_coef is None:
            raise InputError("missing '{k}' coefficient", term=text)
        return Term(default_coef, text)
    m = _TERM.match(text)
    if m is None:
        raise InputError("unclosed or nested '{' in coefficient", term=text)
    raw, mol = m.group(1), m.group(2)
    if raw == "":
        raise InputError("empty coefficient '{}'", term=text)
    if not _POSITIVE_INT.fullmatch(raw):
        raise InputError(f"coefficient {raw!r} is not a positive integer", term=text)
    if len(raw.lstrip("0")) > len(str(MAX_COEF)):
        raise InputError(f"coefficient is larger than {MAX_COEF}", term=text)
    coef = int(raw)
    if coef <= 0:
        raise InputError(f"coefficient must be positive, got {coef}", term=text)
    if coef > MAX_COEF:
        raise InputError(f"coefficient is larger than {MAX_COEF}", term=text)
    if mol == "":
        raise InputError("term has a coefficient but no molecule", term=text)
    if "{" in mol or "}" in mol:
        raise InputError("brace inside the molecule part", term=text)
    return Term(coef, mol)


def split_terms(text: str) -> list[str]:
    """Split a bag on ``.`` outside braces, so ``{1.5}C`` stays one (bad) term instead of two."""
    parts: list[str] = []
    depth = start = 0
    for i, c in enumerate(text):
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
        elif c == "." and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def parse_bag(
    text: str,
    *,
    default_coef: int | None = None,
    path: str | None = None,
    line: int | None = None,
) -> Bag:
    """Parse a whole bag line. Errors carry ``path``/``line`` when given."""
    stripped = text.strip()
    try:
        if stripped == "":
            raise InputError("empty line: a bag needs at least one term")
        return [parse_term(t, default_coef=default_coef) for t in split_terms(stripped)]
    except InputError as err:
        raise err.located(path, line) from None


def format_bag(terms: Iterable[Term]) -> str:
    """Write terms in the benchmark format (coefficient always present)."""
    return ".".join(str(t) for t in terms)


def bag_from_counts(pairs: Iterable[tuple[str, int]]) -> Bag:
    """Terms from ``(mol, coef)`` pairs, dropping non-positive coefficients (they vanish from a side)."""
    return [Term(int(k), m) for m, k in pairs if k > 0]


def bag_totals(terms: Sequence[Term]) -> dict[str, int]:
    """Total coefficient per molecule string (duplicates summed), in first-seen order."""
    out: dict[str, int] = {}
    for t in terms:
        out[t.mol] = out.get(t.mol, 0) + t.coef
    return out
