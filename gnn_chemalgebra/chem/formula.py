"""Molecular formulas without RDKit, in the exact format of RDKit's ``CalcMolFormula``.

Format: RDKit's variant of Hill order (C first if present, then H if present, then the rest
alphabetically, with or without carbon: ``H4B-``, ``H2O``, ``HCl``, ``O4S-2``), counts above 1 written,
net charge appended as ``+``, ``-``, ``+2``, ``-3``.
Compositions use element symbols plus the net charge under ``"charge"`` (see ``element_view``).

Isotopes: the benchmark writes formulas with the default ``CalcMolFormula``, which merges isotopes into
their element (``[2H]C`` -> ``CH4``, ``[13CH4]`` -> ``CH4``), exactly as :func:`.composition.atom_label`
ignores isotopes. To agree with it, :func:`parse_formula` reads the hydrogen isotope symbols ``D`` and
``T`` (written by ``CalcMolFormula(separateIsotopes=True)``) as ``H``, and rejects bracketed isotope
labels such as ``[13C]`` with a :class:`ChemistryError` that says so. Dummy atoms (``*``) are not elements
and are rejected too.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from ..errors import ChemistryError
from .composition import CHARGE_KEY, charge_suffix

ELEMENTS = frozenset(
    """H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge As Se Br Kr
    Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb Lu
    Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu Am Cm Bk Cf Es Fm Md No Lr Rf Db Sg
    Bh Hs Mt Ds Rg Cn Nh Fl Mc Lv Ts Og D T""".split()
)

_TOKEN = re.compile(r"([A-Z][a-z]?)([0-9]*)")
_CHARGE = re.compile(r"([+-])([0-9]*)\Z")
# Hydrogen isotopes: counted as hydrogen, as the default CalcMolFormula does.
_ISOTOPE_ALIASES = {"D": "H", "T": "H"}
# Counts and charges are capped so that int() never meets a huge digit string (and tensors never overflow).
MAX_COUNT_DIGITS = 9


def _count(digits: str, what: str, formula: str) -> int:
    if len(digits) > MAX_COUNT_DIGITS:
        raise ChemistryError(f"{what} has more than {MAX_COUNT_DIGITS} digits", term=formula)
    return int(digits)


def parse_formula(formula: str) -> Counter:
    """Element counts (and ``"charge"`` if non-zero) of a formula such as ``C7H4ClNO4`` or ``H4B-``.

    Accepts any element order (and repeated elements), so hand-written formulas work too.
    """
    if not formula:
        raise ChemistryError("empty formula", term=formula)
    if any(c.isspace() for c in formula):
        raise ChemistryError("whitespace inside a formula", term=formula)
    if "[" in formula:
        raise ChemistryError(
            "isotope labels such as '[13C]' are not supported (CalcMolFormula's default merges isotopes)",
            term=formula,
        )
    if "*" in formula:
        raise ChemistryError("dummy atom '*' is not an element", term=formula)
    body, charge = formula, 0
    m = _CHARGE.search(formula)
    if m:
        body = formula[: m.start()]
        mag = _count(m.group(2), "charge", formula) if m.group(2) else 1
        if mag == 0:
            raise ChemistryError("charge of zero written explicitly", term=formula)
        charge = mag if m.group(1) == "+" else -mag
    out: Counter = Counter()
    pos = 0
    while pos < len(body):
        t = _TOKEN.match(body, pos)
        if t is None or t.end() == pos:
            raise ChemistryError(f"unexpected character {body[pos]!r} at position {pos}", term=formula)
        sym, num = t.group(1), t.group(2)
        if sym not in ELEMENTS:
            raise ChemistryError(f"unknown element symbol {sym!r}", term=formula)
        n = _count(num, f"count of {sym}", formula) if num else 1
        if n == 0:
            raise ChemistryError(f"zero count for {sym}", term=formula)
        out[_ISOTOPE_ALIASES.get(sym, sym)] += n
        pos = t.end()
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
