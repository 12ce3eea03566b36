"""The general-chemistry rules: which molecules of a line react and what they give, by the tables of
:mod:`.species`. Each rule returns the consumed items and the products' SMILES (the amounts come from the exact
algebra, :mod:`.line`), or ``None`` when the line is not its reaction or the reaction is not unambiguous.

A rule fires only when every molecule of the line is accounted for: the reacting ones, and spectators it knows to
be unchanged (ions, water where the rule allows it). Anything else on the line (a solvent, a catalyst, an organic
molecule the rule does not name) keeps the rule silent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rdkit import Chem

from ...errors import ChemAlgebraError
from .species import (
    ACIDS,
    ACTIVITY,
    ALKALI,
    BASES,
    CARBONATES,
    HALOGENS,
    ION_CHARGE,
    NOBLE_OXIDES,
    ONE_OXIDE,
    OXIDISING_ACIDS,
    REDOX_COUPLES,
    WATER_METALS,
    Item,
    _canon,
    covalent_salt,
    insoluble,
)

Proposal = tuple[str, list[Item], list[str]]  # (rule name, consumed items, products' SMILES)
ION_KINDS = frozenset({"cation", "anion"})


def _only(items: Sequence[Item], kinds: set[str] | frozenset[str]) -> list[Item]:
    return [it for it in items if it.kind in kinds]


def _rest_ok(items: Sequence[Item], used: Sequence[Item], spectators: frozenset[str]) -> bool:
    """Every item not used is a spectator of one of ``spectators``' kinds."""
    ids = {id(u) for u in used}
    return all(it.kind in spectators for it in items if id(it) not in ids)


def _set_charge(smiles: str, pattern: str, delta_h: int) -> str | None:
    """``smiles`` with every atom matched first in ``pattern`` given ``delta_h`` hydrogens (and charge to match):
    a carboxylic acid deprotonated, an amine protonated. ``None`` when nothing matches."""
    mol = Chem.RWMol(Chem.MolFromSmiles(smiles))
    hits = mol.GetSubstructMatches(Chem.MolFromSmarts(pattern))
    if not hits:
        return None
    for hit in hits:
        atom = mol.GetAtomWithIdx(hit[0])
        hydrogens = atom.GetTotalNumHs()
        atom.SetNoImplicit(True)
        atom.SetNumExplicitHs(hydrogens + delta_h)
        atom.SetFormalCharge(atom.GetFormalCharge() + delta_h)
    out = mol.GetMol()
    Chem.SanitizeMol(out)
    return _canon(Chem.MolToSmiles(out))


CARBOXYL_OH = "[OX2H1:1][CX3]=O"
AMINE_N = "[NX3;H2,H1,H0;!$(N-[C,S,P]=[O,S,N]);!$(N-[N,O]);!$(N-a);!$(N-C=C):1]"


def _acid_parts(it: Item) -> tuple[str | None, bool] | None:
    """What an acid item leaves (its anion SMILES; ``None`` for ``[H+]``) and whether it is a mineral acid."""
    if it.kind == "acid":
        if it.smiles == _canon("[H+]"):
            return None, True
        return _canon(ACIDS[next(a for a in ACIDS if _canon(a) == it.smiles)][0]), True
    if it.kind in ("fuel", "other") and it.smiles is not None and "carboxylic_acid" in it.groups:
        if "amine" in it.groups:
            return None  # an amino acid: a zwitterion, no simple rule
        anion = _set_charge(it.smiles, CARBOXYL_OH, -1)
        return (anion, False) if anion is not None else None
    return None


def _base_parts(it: Item, mineral: bool) -> tuple[list[str], str | None] | None:
    """What a base item gives (its products besides the salt) and the metal it carries when written covalently."""
    if it.kind == "base":
        return list(BASES[next(b for b in BASES if _canon(b) == it.smiles)][1]), None
    if it.kind == "salt" and it.anion is not None and it.anion in {_canon(b) for b in BASES}:
        return list(BASES[next(b for b in BASES if _canon(b) == it.anion)][1]), it.metal
    if mineral and it.smiles is not None and it.groups.count("amine") == 1 and "carboxylic_acid" not in it.groups:
        cation = _set_charge(it.smiles, AMINE_N, 1)
        return ([cation], None) if cation is not None else None
    return None


def neutralisation(items: Sequence[Item]) -> Proposal | None:
    """An acid and a base give the acid's anion (or its salt, for a base written covalently) and water, CO2 and
    water from a carbonate, an ammonium ion from ammonia or an amine (only with a mineral acid: a carboxylic acid
    and an amine are left to the model, a salt cold or an amide hot)."""
    acids = [(it, got) for it in items if (got := _acid_parts(it)) is not None]
    if len(acids) != 1:
        return None
    acid, (anion, mineral) = acids[0]
    bases = [(it, got) for it in items if it is not acid and (got := _base_parts(it, mineral)) is not None]
    if len(bases) != 1:
        return None
    base, (made, metal) = bases[0]
    if not _rest_ok(items, [acid, base], frozenset({"cation", "anion", "water"})):
        return None
    products = list(made)
    if metal is not None:
        if anion is None:
            return None
        products.append(covalent_salt(metal, ION_CHARGE[metal], anion)[0])
    elif anion is not None:
        products.append(anion)
    carbonates = {_canon(c) for c in CARBONATES}
    carbonate = base.smiles in carbonates or base.anion in carbonates
    return ("carbonate_acid" if carbonate else "neutralisation"), [acid, base], products


def _rank(metal: str) -> int:
    return ACTIVITY.index(metal)


def _ion(metal: str) -> str:
    q = ION_CHARGE[metal]
    return _canon(f"[{metal}+{q}]" if q > 1 else f"[{metal}+]")


def metal_acid(items: Sequence[Item]) -> Proposal | None:
    """A metal above hydrogen in the activity series and a non-oxidising acid give the metal's ion, the acid's
    anion and hydrogen."""
    metals = _only(items, {"metal"})
    acids = [(it, got) for it in items if (got := _acid_parts(it)) is not None]
    if len(metals) != 1 or len(acids) != 1:
        return None
    metal, (acid, (anion, _)) = metals[0], acids[0]
    if metal.metal is None or _rank(metal.metal) >= _rank("H") or acid.smiles in {_canon(a) for a in OXIDISING_ACIDS}:
        return None
    spectators = frozenset({"cation", "anion"} | (set() if metal.metal in WATER_METALS else {"water"}))
    if not _rest_ok(items, [metal, acid], spectators):
        return None
    return "metal_acid", [metal, acid], [_ion(metal.metal), *([anion] if anion else []), "[H][H]"]


def metal_water(items: Sequence[Item]) -> Proposal | None:
    """An alkali or heavier alkaline-earth metal and water give the hydroxide (as ions) and hydrogen."""
    metals, water = _only(items, {"metal"}), _only(items, {"water"})
    if len(metals) != 1 or len(water) != 1 or len(items) != 2 or metals[0].metal not in WATER_METALS:
        return None
    return "metal_water", [metals[0], water[0]], [_ion(metals[0].metal or ""), "[OH-]", "[H][H]"]


def precipitation(items: Sequence[Item]) -> Proposal | None:
    """Ions in water: the one cation-anion pair whose salt is insoluble precipitates (written covalently)."""
    if any(it.kind not in ("cation", "anion", "base", "water") for it in items):
        return None
    cations = _only(items, {"cation"})
    anions = [
        it
        for it in items
        if it.kind in ("anion", "base") and it.smiles and Chem.GetFormalCharge(Chem.MolFromSmiles(it.smiles)) < 0
    ]
    pairs = [(c, a) for c in cations for a in anions if c.metal and a.smiles and insoluble(c.metal, a.smiles)]
    if len(pairs) != 1:
        return None
    c, a = pairs[0]
    salt, _, _ = covalent_salt(c.metal or "", ION_CHARGE[c.metal or ""], a.smiles or "")
    return "precipitation", [c, a], [salt]


def displacement(items: Sequence[Item]) -> Proposal | None:
    """A metal displaces a less active metal's ion from solution; a halogen displaces a less active halide."""
    metals, cations = _only(items, {"metal"}), _only(items, {"cation"})
    if len(metals) == 1 and metals[0].metal is not None:
        m = metals[0].metal
        lower = [c for c in cations if c.metal and c.metal != m and _rank(c.metal) > _rank(m)]
        water_ok = m not in WATER_METALS
        rest = frozenset({"cation", "anion"} | ({"water"} if water_ok else set()))
        if len(lower) == 1 and _rest_ok(items, [metals[0], lower[0]], rest):
            return "displacement", [metals[0], lower[0]], [_ion(m), _canon(f"[{lower[0].metal}]")]
        return None
    halogens = _only(items, {"halogen"})
    if len(halogens) != 1:
        return None
    x = next(h for h in HALOGENS if _canon(f"{h}{h}") == halogens[0].smiles)
    halides = [it for it in items if it.smiles in {_canon(f"[{h}-]") for h in HALOGENS[HALOGENS.index(x) + 1 :]}]
    if len(halides) != 1 or not _rest_ok(items, [halogens[0], halides[0]], frozenset({"cation", "anion", "water"})):
        return None
    y = halides[0].smiles.strip("[-]") if halides[0].smiles else ""
    return "displacement", [halogens[0], halides[0]], [_canon(f"{y}{y}"), _canon(f"[{x}-]")]


def combustion(items: Sequence[Item]) -> Proposal | None:
    """One fuel (C, H, N, O, S; or hydrogen) burnt in oxygen: CO2, water, N2, SO2."""
    oxygen = _only(items, {"oxygen"})
    fuels = _only(items, {"fuel", "hydrogen"})
    if len(oxygen) != 1 or len(fuels) != 1 or len(items) != 2:
        return None
    comp = fuels[0].comp
    made = [s for el, s in (("C", "O=C=O"), ("H", "O"), ("N", "N#N"), ("S", "O=S=O")) if comp.get(el)]
    return "combustion", [fuels[0], oxygen[0]], made


def carbonate_decomposition(items: Sequence[Item]) -> Proposal | None:
    """A carbonate on its own, heated: the metal oxide and CO2 (alkali carbonates but lithium's do not
    decompose); a hydrogencarbonate: the carbonate, water and CO2."""
    co3, hco3 = _canon("[O-]C([O-])=O"), _canon("OC([O-])=O")
    if len(items) == 1 and items[0].kind == "salt" and items[0].anion in (co3, hco3):
        it, anion = items[0], items[0].anion
        consumed, metal = [it], it.metal or ""
    elif len(items) == 2 and {it.kind for it in items} == {"cation", "base"}:
        cation = next(it for it in items if it.kind == "cation")
        carb = next(it for it in items if it.kind == "base")
        if carb.smiles not in (co3, hco3):
            return None
        anion, consumed, metal = carb.smiles, [cation, carb], cation.metal or ""
    else:
        return None
    if anion == co3:
        if metal in ALKALI - {"Li"}:
            return None
        return "carbonate_decomposition", consumed, [covalent_salt(metal, ION_CHARGE[metal], "[O-2]")[0], "O=C=O"]
    if len(consumed) == 2:  # ions: the hydrogencarbonate alone reacts, the cation stays
        return "carbonate_decomposition", [consumed[1]], [co3, "O", "O=C=O"]
    return "carbonate_decomposition", consumed, [covalent_salt(metal, ION_CHARGE[metal], co3)[0], "O", "O=C=O"]


def _element_of(it: Item) -> str | None:
    """The element a line's item is made of alone (``Mg``, ``O``, ``Cl``, ``N``), or ``None``."""
    if it.kind == "metal":
        return it.metal
    if it.comp.get("charge") or len(set(it.comp) - {"charge"}) != 1:
        return None
    return next(iter(it.comp)) if it.kind in ("oxygen", "halogen", "hydrogen") or it.smiles == _canon("N#N") else None


def combination(items: Sequence[Item]) -> Proposal | None:
    """Two elements, nothing else: a metal with one common ion burnt in oxygen gives its oxide (covalent,
    ``[Mg]=O``); an alkali or alkaline-earth metal, aluminium or zinc with a halogen gives the halide (as ions, or
    covalent where it is insoluble); hydrogen with a halogen the hydrogen halide, with nitrogen ammonia. Hydrogen
    and oxygen are the combustion rule's."""
    if len(items) != 2:
        return None
    elements = [_element_of(it) for it in items]
    if None in elements or len(set(elements)) != 2:
        return None
    by = dict(zip(elements, items, strict=True))
    metal = next((it.metal for it in items if it.kind == "metal"), None)
    if metal is not None:
        other = next(e for e in by if e != metal)
        if other == "O" and metal in ONE_OXIDE:
            return "combination", list(items), [covalent_salt(metal, ION_CHARGE[metal], "[O-2]")[0]]
        if other in HALOGENS and metal in ONE_OXIDE | ALKALI:
            halide = _canon(f"[{other}-]")
            if insoluble(metal, halide):
                return "combination", list(items), [covalent_salt(metal, ION_CHARGE[metal], halide)[0]]
            return "combination", list(items), [_ion(metal), halide]
        return None
    if "H" in by and set(by) - {"H"} <= set(HALOGENS):
        x = next(e for e in by if e != "H")
        return "combination", list(items), [_canon(x)]
    if set(by) == {"H", "N"}:
        return "combination", list(items), [_canon("N")]
    return None


def thermal_decomposition(items: Sequence[Item]) -> Proposal | None:
    """One substance on its own, heated: a chlorate gives the chloride and oxygen (as ions, the cation unchanged,
    or the covalent salt); the oxide of mercury, silver, gold or platinum the metal and oxygen; hydrogen peroxide
    water and oxygen. (Carbonates are :func:`carbonate_decomposition`'s.)"""
    chlorate, chloride = _canon("[O-]Cl(=O)=O"), _canon("[Cl-]")
    if len(items) == 1:
        it = items[0]
        if it.smiles == _canon("OO"):
            return "thermal_decomposition", [it], ["O", "O=O"]
        if it.kind == "salt" and it.metal and it.anion == _canon("[O-2]") and it.metal in NOBLE_OXIDES:
            return "thermal_decomposition", [it], [_canon(f"[{it.metal}]"), "O=O"]
        if it.kind == "salt" and it.metal and it.anion == chlorate:
            return "thermal_decomposition", [it], [covalent_salt(it.metal, ION_CHARGE[it.metal], chloride)[0], "O=O"]
        return None
    if len(items) == 2 and {it.kind for it in items} == {"cation", "anion"}:
        anion = next(it for it in items if it.kind == "anion")
        if anion.smiles == chlorate:
            return "thermal_decomposition", [anion], [chloride, "O=O"]
    return None


def _couples(smiles: str | None, side: int) -> list[tuple[str, str, float, bool]]:
    """The couples whose oxidised (``side`` 0) or reduced (1) form is ``smiles``."""
    return [c for c in REDOX_COUPLES if smiles is not None and _canon(c[side]) == smiles]


def redox(items: Sequence[Item]) -> Proposal | None:
    """An oxidant and a reductant of the table of half-reactions (:data:`~.species.REDOX_COUPLES`) whose
    potentials say they react: the reduced and the oxidised forms, and water where the oxidant's oxygen leaves
    (the line then holds ``[H+]``, which the reaction consumes). Exactly one such pair on the line, and spectator
    ions beside it; halogens with halides are :func:`displacement`'s."""
    pairs = []
    halides = {_canon(f"[{x}-]") for x in HALOGENS}
    for ox in items:
        for red in items:
            if ox is red or (ox.kind == "halogen" and red.smiles in halides):
                continue
            for oc in _couples(ox.smiles, 0):
                for rc in _couples(red.smiles, 1):
                    if oc is not rc and oc[2] - rc[2] > 0.1:
                        pairs.append((ox, red, oc, rc))
    if len(pairs) != 1:
        return None
    ox, red, oc, rc = pairs[0]
    protons = [it for it in items if it.smiles == _canon("[H+]")]
    if oc[3] != bool(protons):
        return None  # acid needed and missing, or acid on a line whose reaction does not take it
    used = [ox, red, *protons]
    if not _rest_ok(items, used, frozenset({"cation", "anion", "water"})):
        return None
    made = [_canon(oc[1]), _canon(rc[0])] + (["O"] if protons and _canon(oc[1]) != _canon("O") else [])
    return "redox", used, made


GENERAL_RULES: tuple[Callable[[Sequence[Item]], Proposal | None], ...] = (
    combustion,
    metal_water,
    metal_acid,
    neutralisation,
    precipitation,
    displacement,
    carbonate_decomposition,
    combination,
    thermal_decomposition,
    redox,
)


def propose(items: Sequence[Item]) -> list[Proposal]:
    """Every general rule's proposal for the line (most lines: none; an unambiguous line: one)."""
    out: list[Proposal] = []
    for rule in GENERAL_RULES:
        try:
            got = rule(items)
        except (ChemAlgebraError, KeyError, StopIteration, ValueError):
            got = None
        if got is not None:
            out.append(got)
    return out
