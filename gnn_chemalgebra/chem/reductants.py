"""Whether a molecule can act as a reducing agent, and whether a written line is a reduction.

The benchmark writes the oxygen a reduction removes as a leftover oxygen atom (``[O]``, formula ``O``): a
reductive amination is ``aldehyde + amine -> amine + [O]``, a nitro reduction ``ArNO2 -> ArNH2 + 2 [O]``. The
reducing agent's own atoms are not counted, so a line can write such a reduction whether or not the bag holds a
reductant. USPTO records often leave the reductant out, and the training data then holds the reduction without
one; a bag written in full (a chemist's own line) that holds no reductant cannot be reduced, and a line that
reduces it assumes a reagent the user did not give. :func:`reducing_agent` tells which molecules can give the
electrons or hydrogen; :func:`writes_reduction` whether a line writes the oxygen atom.

SMILES are read atom by atom (a B, Al, Si, Ga or Ge atom bearing hydrogen, ...). A formula shows no bonds, so a
formula with boron and hydrogen counts as a hydride source (phenylboronic acid too): the check errs towards
finding a reductant, never towards calling a line a reduction without one.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from ..errors import ChemAlgebraError
from .composition import CHARGE_KEY
from .molecule import Repr, composition
from .smiles import shared_mol

OXYGEN_ATOM = {"smiles": "[O]", "formula": "O"}
# elements whose hydrides give hydride (borohydrides, boranes, alanes, silanes, gallanes, germanes)
HYDRIDE_ELEMENTS = frozenset({"B", "Al", "Si", "Ga", "Ge"})
# elements whose compounds reduce in any form met in these reactions (tin hydrides and SnCl2, SmI2)
ALWAYS_REDUCING = frozenset({"Sn", "Sm"})
# metals that reduce as the element (dissolving-metal and metal/acid reductions)
REDUCING_METALS = frozenset({"Li", "Na", "K", "Mg", "Ca", "Zn", "Fe", "Al", "In", "Mn", "Sn", "Sm", "Ti", "Cr"})
# alkali and alkaline-earth metals: with hydrogen alone they are salt-like hydrides (NaH, LiH, CaH2)
SALT_HYDRIDE_METALS = frozenset({"Li", "Na", "K", "Rb", "Cs", "Mg", "Ca", "Ba"})


def _elements(mol: str, repr: Repr) -> dict[str, int]:
    try:
        comp = composition(mol, repr)
    except ChemAlgebraError:
        return {}
    return {el: n for el, n in comp.items() if el != CHARGE_KEY and n}


def _charge(mol: str, repr: Repr) -> int:
    try:
        return int(composition(mol, repr).get(CHARGE_KEY, 0))
    except ChemAlgebraError:
        return 0


def _by_composition(els: dict[str, int], charge: int) -> bool:
    """The checks a formula allows (SMILES use them too): hydrogen itself, formic acid and formate, hydrazine,
    metals as the element, salt-like hydrides, tin and samarium compounds, dithionite and sulfide, phosphorus
    without oxygen (phosphines)."""
    keys = set(els)
    if keys == {"H"}:  # H2, H atom, hydride ion
        return True
    if keys == {"C", "H", "O"} and els["C"] == 1 and els["O"] == 2 and els["H"] in (1, 2):  # HCOOH, HCOO-
        return True
    if keys == {"N", "H"} and els["N"] == 2 and els["H"] == 4:  # hydrazine
        return True
    if len(keys) == 1 and charge == 0 and keys <= REDUCING_METALS:  # Zn, Fe, Na ... as the element
        return True
    if keys <= SALT_HYDRIDE_METALS | {"H"} and "H" in keys and len(keys) > 1:  # NaH, CaH2
        return True
    if keys & ALWAYS_REDUCING:
        return True
    if keys == {"S", "O"} and els["S"] == 2 and els["O"] == 4:  # dithionite
        return True
    if keys == {"S"} and charge < 0 or keys == {"S", "H"} and charge < 0:  # sulfide, hydrosulfide
        return True
    return "P" in keys and "O" not in keys  # a phosphine (PPh3, PBu3) takes oxygen


@lru_cache(maxsize=65536)
def reducing_agent(mol: str, repr: Repr) -> bool:
    """Whether ``mol`` can reduce: give hydride or hydrogen (H2, borohydrides, aluminium hydrides, silanes, formic
    acid, hydrazine, NaH), electrons (a metal as the element, tin(II), samarium(II), dithionite, sulfide) or take
    oxygen (a phosphine). Unparsable molecules are not reductants."""
    els = _elements(mol, repr)
    if not els:
        return False
    if _by_composition(els, _charge(mol, repr)):
        return True
    if not set(els) & HYDRIDE_ELEMENTS or "H" not in els:
        return False
    if repr == "formula":  # bonds unknown: boron and hydrogen in one formula may be a B-H bond
        return True
    try:
        m = shared_mol(mol)
    except ChemAlgebraError:
        return False
    return any(a.GetSymbol() in HYDRIDE_ELEMENTS and a.GetTotalNumHs() > 0 for a in m.GetAtoms())


def writes_reduction(new_products: Iterable[str], repr: Repr) -> bool:
    """Whether a line's new products include the oxygen atom the benchmark writes for an oxygen a reduction
    removed."""
    return OXYGEN_ATOM[repr] in set(new_products)


def reductant_in(mols: Iterable[str], repr: Repr) -> bool:
    """Whether any molecule of a bag can reduce."""
    return any(reducing_agent(m, repr) for m in mols)


__all__ = ["OXYGEN_ATOM", "reducing_agent", "reductant_in", "writes_reduction"]
