"""Molecular formulas without RDKit: one parser for the benchmark's strings and for textbook notation.

Written format: RDKit's ``CalcMolFormula`` variant of Hill order (C first if present, then H if present,
then the rest alphabetically, with or without carbon: ``H4B-``, ``H2O``, ``HCl``, ``O4S-2``), counts above 1
written, net charge appended as ``+``, ``-``, ``+2``, ``-3``. Compositions use element symbols plus the net
charge under ``"charge"`` (see ``element_view``).

:func:`parse_formula` reads three notations, each a superset of the one before:

* ``"rdkit"`` (default): exactly the strings ``CalcMolFormula`` writes, plus any element order. The data
  build, the evaluator and the models read benchmark files with it; nothing else is accepted, so a model's
  malformed output stays invalid.
* ``"extended"``: also groups ``Ca3(PO4)2``, ``K4[Fe(CN)6]``, hydrates joined by ``*``, ``·`` or ``•``
  (``CuSO4*5H2O``), charges written ``SO4^2-``, ``SO4{2-}``, ``SO4^-2`` or with superscripts ``SO₄²⁻`` and
  subscript counts. Trailing ``N3-`` keeps ``CalcMolFormula``'s meaning (azide: three N, charge -1), so every
  benchmark string reads exactly as in ``"rdkit"``. Used for the formula input of ``gnnca predict``, where
  ``.`` separates molecules.
* ``"textbook"``: also ``.`` as a hydrate dot (``CuSO4.5H2O``) and ``Fe3+``, ``S2-``, ``[Fe(CN)6]4-`` as
  monatomic or bracketed ions whose digits are the charge (a polyatomic ``NH4+``, ``H3O+`` keeps its counts).
  Used by ``gnnca balance``, where species are separated by ``" + "``.

Isotopes: the benchmark writes formulas with the default ``CalcMolFormula``, which merges isotopes into
their element (``[2H]C`` -> ``CH4``, ``[13CH4]`` -> ``CH4``), exactly as :func:`.composition.atom_label`
ignores isotopes. To agree with it, the hydrogen isotope symbols ``D`` and ``T`` (written by
``CalcMolFormula(separateIsotopes=True)``) read as ``H``, and bracketed isotope labels such as ``[13C]`` are
rejected with a :class:`ChemistryError` that says so. Dummy atoms (``*``) are not elements and are rejected.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Literal

from ..errors import ChemistryError
from .composition import CHARGE_KEY, charge_suffix
from .text import WHITESPACE, foreign_char

ELEMENTS = frozenset(
    """H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge As Se Br Kr
    Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb Lu
    Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu Am Cm Bk Cf Es Fm Md No Lr Rf Db Sg
    Bh Hs Mt Ds Rg Cn Nh Fl Mc Lv Ts Og D T""".split()
)

Notation = Literal["rdkit", "extended", "textbook"]
NOTATIONS: tuple[str, ...] = ("rdkit", "extended", "textbook")

_ELEMENT = re.compile(r"[A-Z][a-z]?")
_DIGITS = re.compile(r"[0-9]*")
_CHARGE = re.compile(r"([+-])([0-9]*)\Z")
# Explicit charge forms of the extended notations: SO4^2-, SO4^-2, SO4{2-}, SO4{-2}, SO4^-, SO4{-}.
_EXPLICIT_CHARGE = (
    re.compile(r"\^([0-9]*)([+-])\Z"),
    re.compile(r"\^([+-])([0-9]*)\Z"),
    re.compile(r"\{([0-9]*)([+-])\}\Z"),
    re.compile(r"\{([+-])([0-9]*)\}\Z"),
)
_DIGITS_THEN_SIGN = re.compile(r"([0-9]+)([+-])\Z")
# Subscript counts and the Unicode minus read as ASCII; superscripts are read only as a trailing charge.
_SUBSCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉−", "0123456789-")
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-")
_SUPERSCRIPT_CHARGE = re.compile(r"([⁰¹²³⁴⁵⁶⁷⁸⁹]*)([⁺⁻])\Z|([⁺⁻])([⁰¹²³⁴⁵⁶⁷⁸⁹]*)\Z")
_CLOSE = {"(": ")", "[": "]"}
_HYDRATE_DOTS = {"rdkit": "", "extended": "*·•⋅", "textbook": "*·•⋅."}
FORMULA_UNICODE = "₀₁₂₃₄₅₆₇₈₉−⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻·•⋅"  # the characters outside ASCII that the notations beyond "rdkit" read
# Hydrogen isotopes: counted as hydrogen, as the default CalcMolFormula does.
_ISOTOPE_ALIASES = {"D": "H", "T": "H"}
# Counts and charges are capped so that int() never meets a huge digit string (and tensors never overflow).
MAX_COUNT_DIGITS = 9
_MAX_DEPTH = 20


def _count(digits: str, what: str, formula: str) -> int:
    if len(digits) > MAX_COUNT_DIGITS:
        raise ChemistryError(f"{what} has more than {MAX_COUNT_DIGITS} digits", term=formula)
    return int(digits)


def _charge_value(sign: str, digits: str, formula: str) -> int:
    mag = _count(digits, "charge", formula) if digits else 1
    if mag == 0:
        raise ChemistryError("charge of zero written explicitly", term=formula)
    return mag if sign == "+" else -mag


def _is_single_unit(body: str) -> bool:
    """One element symbol (``Fe``) or one bracketed group (``[Fe(CN)6]``): the digits after it are a charge."""
    if _ELEMENT.fullmatch(body):
        return True
    if len(body) < 2 or body[0] not in _CLOSE or body[-1] != _CLOSE[body[0]]:
        return False
    depth = 0
    for i, c in enumerate(body):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        if depth == 0 and i < len(body) - 1:
            return False
    return True


def _split_charge(formula: str, notation: Notation) -> tuple[str, int]:
    """Body and net charge; the extended forms are tried before the ``CalcMolFormula`` suffix."""
    if notation != "rdkit":
        text = formula.translate(_SUBSCRIPTS)
        sup = _SUPERSCRIPT_CHARGE.search(text)
        if sup:
            digits, sign = (sup.group(1), sup.group(2)) if sup.group(2) else (sup.group(4), sup.group(3))
            return text[: sup.start()], _charge_value(
                sign.translate(_SUPERSCRIPTS), digits.translate(_SUPERSCRIPTS), formula
            )
        for pattern in _EXPLICIT_CHARGE:
            m = pattern.search(text)
            if m:
                a, b = m.groups()
                sign, digits = (b, a) if b in ("+", "-") else (a, b)
                return text[: m.start()], _charge_value(sign, digits, formula)
        formula = text
        if notation == "textbook":
            m = _DIGITS_THEN_SIGN.search(formula)
            if m and _is_single_unit(formula[: m.start()]):
                return formula[: m.start()], _charge_value(m.group(2), m.group(1), formula)
    m = _CHARGE.search(formula)
    if m:
        return formula[: m.start()], _charge_value(m.group(1), m.group(2), formula)
    return formula, 0


class _Reader:
    """Recursive descent over one formula body: ``part (DOT [n] part)*``, ``part = (Element | (part) | [part]) n?``."""

    def __init__(self, body: str, formula: str, notation: Notation) -> None:
        self.body, self.formula, self.notation = body, formula, notation
        self.pos = 0

    def fail(self, reason: str) -> ChemistryError:
        return ChemistryError(reason, term=self.formula)

    def unexpected(self) -> ChemistryError:
        hint = ""
        if self.pos == 0 and self.body[0].isdigit() and self.notation == "extended":
            hint = " (a count before a formula: '.' separates molecules here, so write a hydrate as CuSO4*5H2O)"
        return self.fail(f"unexpected character {self.body[self.pos]!r} at position {self.pos}{hint}")

    def number(self, what: str, zero: str) -> int | None:
        """The digits at the cursor (``None`` when there are none); ``zero`` is the error for a written 0."""
        digits = _DIGITS.match(self.body, self.pos).group()  # type: ignore[union-attr]
        self.pos += len(digits)
        if not digits:
            return None
        n = _count(digits, what, self.formula)
        if n == 0:
            raise self.fail(zero)
        return n

    def whole(self) -> Counter:
        dots = _HYDRATE_DOTS[self.notation]
        out = self.part(0)
        while self.pos < len(self.body) and self.body[self.pos] in dots:
            dot = self.body[self.pos]
            self.pos += 1
            times = self.number("hydrate multiplier", f"zero hydrate multiplier after {dot!r}") or 1
            if self.pos == len(self.body) or self.body[self.pos] in dots:
                raise self.fail(f"{dot!r} joins the parts of a hydrate (CuSO4{dot}5H2O) and needs a formula after it")
            for k, v in self.part(0).items():
                out[k] += times * v
        if self.pos < len(self.body):
            if self.body[self.pos] in ")]" and self.notation != "rdkit":
                raise self.fail(f"unmatched {self.body[self.pos]!r} at position {self.pos}")
            raise self.unexpected()
        return out

    def part(self, depth: int) -> Counter:
        out: Counter = Counter()
        start = self.pos
        while self.pos < len(self.body):
            c = self.body[self.pos]
            if c in _CLOSE and self.notation != "rdkit":
                group = self.group(c, depth)
                for k, v in group.items():
                    out[k] += v
                continue
            el = _ELEMENT.match(self.body, self.pos)
            if el is None:
                break
            sym = el.group()
            if sym not in ELEMENTS:
                raise self.fail(f"unknown element symbol {sym!r}")
            self.pos = el.end()
            out[_ISOTOPE_ALIASES.get(sym, sym)] += self.number(f"count of {sym}", f"zero count for {sym}") or 1
        if self.pos == start and self.pos < len(self.body) and self.body[self.pos] not in ")]":
            c = self.body[self.pos]
            if c in _HYDRATE_DOTS[self.notation]:
                raise self.fail(f"{c!r} joins the parts of a hydrate (CuSO4{c}5H2O) and needs a formula before it")
            raise self.unexpected()
        return out

    def group(self, opener: str, depth: int) -> Counter:
        if depth >= _MAX_DEPTH:
            raise self.fail(f"groups nested more than {_MAX_DEPTH} deep")
        at = self.pos
        self.pos += 1
        if self.pos < len(self.body) and self.body[self.pos].isdigit() and opener == "[":
            raise self.fail(
                "isotope labels such as '[13C]' are not supported (CalcMolFormula's default merges isotopes)"
            )
        inner = self.part(depth + 1)
        closer = _CLOSE[opener]
        if self.pos >= len(self.body) or self.body[self.pos] != closer:
            if self.pos < len(self.body) and self.body[self.pos] in ")]":
                raise self.fail(f"{opener!r} at position {at} closed by {self.body[self.pos]!r}")
            if self.pos < len(self.body):
                raise self.unexpected()
            raise self.fail(f"unclosed {opener!r} at position {at}")
        if not inner:
            raise self.fail(f"empty group {opener + closer!r} at position {at}")
        self.pos += 1
        times = self.number("group count", f"zero count for the group at position {at}") or 1
        return Counter({k: v * times for k, v in inner.items()})


def parse_formula(formula: str, *, notation: Notation = "rdkit") -> Counter:
    """Element counts (and ``"charge"`` if non-zero) of a formula such as ``C7H4ClNO4`` or ``H4B-``.

    Accepts any element order (and repeated elements), so hand-written formulas work too; ``notation``
    (see the module docstring) adds textbook groups, hydrates and charge forms.
    """
    if notation not in NOTATIONS:
        raise ValueError(f"unknown formula notation {notation!r}; expected one of {', '.join(NOTATIONS)}")
    if not formula:
        raise ChemistryError("empty formula", term=formula)
    if WHITESPACE.search(formula):
        raise ChemistryError("whitespace inside a formula", term=formula)
    foreign = foreign_char(formula, "" if notation == "rdkit" else FORMULA_UNICODE)
    if foreign is not None:
        raise ChemistryError(
            f"unexpected {foreign}: not ASCII, nor a subscript, superscript or hydrate dot", term=formula
        )
    if notation == "rdkit" and "[" in formula:
        raise ChemistryError(
            "isotope labels such as '[13C]' are not supported (CalcMolFormula's default merges isotopes)",
            term=formula,
        )
    if "*" in formula and (notation == "rdkit" or formula.strip("*") != formula or "**" in formula):
        hint = "" if notation == "rdkit" else " ('*' only joins the parts of a hydrate: CuSO4*5H2O)"
        raise ChemistryError(f"dummy atom '*' is not an element{hint}", term=formula)
    body, charge = _split_charge(formula, notation)
    out = _Reader(body, formula, notation).whole() if body else Counter()
    out = Counter({k: v for k, v in out.items() if v})
    if not out:
        raise ChemistryError("formula has no element", term=formula)
    if charge:
        out[CHARGE_KEY] = charge
    return out


def hill_order(symbols: list[str]) -> list[str]:
    """CalcMolFormula's order: C, then H, then the other symbols alphabetically."""
    syms = sorted(set(symbols))
    head = [s for s in ("C", "H") if s in syms]
    return head + [s for s in syms if s not in ("C", "H")]


def write_formula(comp: Mapping[str, int]) -> str:
    """Inverse of :func:`parse_formula`: RDKit-ordered formula with the charge suffix."""
    counts = {k: int(v) for k, v in comp.items() if k != CHARGE_KEY and v}
    if any(v < 0 for v in counts.values()):
        raise ChemistryError(f"negative element count in {dict(comp)}")
    unknown = sorted(k for k in counts if k not in ELEMENTS)
    if unknown:
        raise ChemistryError(f"not element symbols: {unknown}")
    if not counts:
        raise ChemistryError("composition has no element")
    parts = [f"{s}{counts[s] if counts[s] > 1 else ''}" for s in hill_order(list(counts))]
    return "".join(parts) + charge_suffix(int(comp.get(CHARGE_KEY, 0)))
