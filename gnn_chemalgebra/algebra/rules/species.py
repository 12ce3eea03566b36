"""What the general-chemistry rules know of a molecule: metals and their ions, acids and their anions, bases and
what they give, salts written covalently, fuels, and the solubility and activity tables a course teaches.

Every molecule of a line becomes an :class:`Item`: the molecule as written, its amount, its canonical SMILES (a
formula is mapped to the SMILES of the one inorganic species of that formula in these tables; an organic formula
keeps only its composition) and its kind. Nothing here guesses: a molecule the tables do not name is ``other``
(or ``fuel`` when it holds only C, H, N, O and S), and a rule that meets one does not fire.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from math import gcd

from rdkit import Chem

from ...chem.molecule import Repr, composition, smiles_to_formula
from ...chem.smiles import try_canonical
from ...errors import ChemAlgebraError

# The activity series, most active first (H marks where metals stop freeing hydrogen from acids), with the charge
# of each metal's common ion in water.
ACTIVITY: tuple[str, ...] = (
    "Li", "Cs", "Rb", "K", "Ba", "Sr", "Ca", "Na", "Mg", "Al", "Mn", "Zn", "Cr", "Fe", "Cd", "Co", "Ni", "Sn", "Pb",
    "H", "Cu", "Hg", "Ag", "Pt", "Au",
)  # fmt: skip
ION_CHARGE: dict[str, int] = {
    "Li": 1, "Cs": 1, "Rb": 1, "K": 1, "Na": 1, "Ag": 1,
    "Ba": 2, "Sr": 2, "Ca": 2, "Mg": 2, "Mn": 2, "Zn": 2, "Fe": 2, "Cd": 2, "Co": 2, "Ni": 2, "Sn": 2, "Pb": 2,
    "Cu": 2, "Hg": 2, "Pt": 2, "Al": 3, "Cr": 3, "Au": 3,
}  # fmt: skip
ALKALI = frozenset({"Li", "Na", "K", "Rb", "Cs"})
WATER_METALS = ALKALI | {"Ca", "Sr", "Ba"}  # free hydrogen from cold water
HALOGENS: tuple[str, ...] = ("F", "Cl", "Br", "I")  # the halogens' activity, most active first

# Acids as molecules: SMILES -> (the anion they leave, protons given). Nitric acid oxidises metals (no H2).
ACIDS: dict[str, tuple[str, int]] = {
    "Cl": ("[Cl-]", 1),
    "Br": ("[Br-]", 1),
    "I": ("[I-]", 1),
    "F": ("[F-]", 1),
    "O=[N+]([O-])O": ("[O-][N+](=O)[O-]", 1),
    "O=S(=O)(O)O": ("[O-]S(=O)(=O)[O-]", 2),
    "O=P(O)(O)O": ("[O-]P(=O)([O-])[O-]", 3),
}
OXIDISING_ACIDS = frozenset({"O=[N+]([O-])O"})
# Bases: SMILES -> (protons taken, what they become). Carbonic acid gives off CO2 and water.
BASES: dict[str, tuple[int, tuple[str, ...]]] = {
    "[OH-]": (1, ("O",)),
    "[O-2]": (2, ("O",)),
    "[O-]C([O-])=O": (2, ("O=C=O", "O")),
    "OC([O-])=O": (1, ("O=C=O", "O")),
    "N": (1, ("[NH4+]",)),
}
CARBONATES = frozenset({"[O-]C([O-])=O", "OC([O-])=O"})
# Anions the tables know (with the bases' anions): they pair with metal ions into salts.
ANIONS: tuple[str, ...] = (
    "[Cl-]", "[Br-]", "[I-]", "[F-]", "[O-][N+](=O)[O-]", "[O-]S(=O)(=O)[O-]", "[O-]P(=O)([O-])[O-]", "[OH-]",
    "[O-2]", "[O-]C([O-])=O", "OC([O-])=O", "[S-2]", "CC(=O)[O-]", "[O-]Cl(=O)=O", "[O-][Mn](=O)(=O)=O",
    "[O-][Cr](=O)(=O)O[Cr](=O)(=O)[O-]", "[O-]S(=O)(=S)[O-]", "[O-]S(=O)(=O)SSS(=O)(=O)[O-]", "O=C([O-])C(=O)[O-]",
)  # fmt: skip
MOLECULES: tuple[str, ...] = (
    "O", "O=O", "[H][H]", "O=C=O", "N#N", "O=S=O", "ClCl", "BrBr", "II", "FF", "[H+]", "OO",
)  # fmt: skip
# Ions of a second charge that the redox couples name (the metals' common ions are in ION_CHARGE).
OTHER_IONS: tuple[str, ...] = ("[Fe+3]", "[Sn+4]")
# The half-reactions a course teaches: (oxidised form, reduced form, standard potential in volts, whether the
# oxidised form needs acid to be reduced: its oxygen leaves as water). The oxidised form of the couple higher in the
# table oxidises the reduced form of a lower one.
REDOX_COUPLES: tuple[tuple[str, str, float, bool], ...] = (
    ("OO", "O", 1.78, True),  # hydrogen peroxide as an oxidant
    ("[O-][Mn](=O)(=O)=O", "[Mn+2]", 1.51, True),
    ("ClCl", "[Cl-]", 1.36, False),
    ("[O-][Cr](=O)(=O)O[Cr](=O)(=O)[O-]", "[Cr+3]", 1.33, True),
    ("BrBr", "[Br-]", 1.07, False),
    ("[Fe+3]", "[Fe+2]", 0.77, False),
    ("O=O", "OO", 0.70, False),  # hydrogen peroxide as a reductant: it gives off oxygen
    ("II", "[I-]", 0.54, False),
    ("[Sn+4]", "[Sn+2]", 0.15, False),
    ("[O-]S(=O)(=O)SSS(=O)(=O)[O-]", "[O-]S(=O)(=S)[O-]", 0.08, False),
    ("O=C=O", "O=C([O-])C(=O)[O-]", -0.49, False),
)
# Metals whose one common ion a combination with oxygen or a halogen gives (sodium and potassium burn to
# peroxides and superoxides, iron and copper have two common ions: left out of the oxides).
ONE_OXIDE = frozenset({"Li", "Mg", "Ca", "Sr", "Ba", "Al", "Zn"})
# Oxides that heat alone splits into the metal and oxygen.
NOBLE_OXIDES = frozenset({"Hg", "Ag", "Au", "Pt"})
NEUTRAL_ANION_PARTS = {"[OH-]": "O", "[O-2]": "O"}


@lru_cache(maxsize=4096)
def _canon(smiles: str) -> str:
    """Canonical SMILES; cached, since the rules compare every molecule of a line with the same constant species."""
    got = try_canonical(smiles)
    if got is None:
        raise ChemAlgebraError(f"not a molecule: {smiles!r}")
    return got


def insoluble(metal: str, anion: str) -> bool:
    """Whether the salt of ``metal``'s ion and ``anion`` (canonical SMILES) precipitates from water, by the
    solubility rules a course teaches; a salt they leave open (silver hydroxide, calcium sulfate) counts as soluble."""
    a = _canon(anion)
    if metal in ALKALI:
        return False
    halide = a in {_canon(x) for x in ("[Cl-]", "[Br-]", "[I-]")}
    if halide:
        return metal in {"Ag", "Pb", "Hg"}
    if a == _canon("[F-]"):
        return metal in {"Ca", "Sr", "Ba", "Mg", "Pb"}
    if a == _canon("[O-]S(=O)(=O)[O-]"):
        return metal in {"Ba", "Sr", "Pb"}
    if a == _canon("[OH-]"):
        return metal not in {"Ba", "Sr", "Ca", "Ag"}
    return a in {_canon(x) for x in ("[O-]C([O-])=O", "[O-]P(=O)([O-])[O-]", "[S-2]")}


@dataclass(frozen=True)
class Item:
    """One molecule of a line as the rules read it. ``kind``: ``metal`` (the element), ``cation`` (a metal ion),
    ``anion``, ``acid`` (a molecular acid or ``[H+]``), ``base`` (``[OH-]``, a carbonate, ammonia ...), ``salt`` (a
    metal compound written covalently: ``metal`` and ``anion`` say what it holds), ``water``, ``oxygen``,
    ``hydrogen``, ``halogen`` (X2), ``fuel`` (only C, H, N, O, S, neutral), ``other``."""

    written: str
    amount: int
    smiles: str | None
    comp: Counter
    kind: str
    metal: str | None = None
    anion: str | None = None
    groups: tuple[str, ...] = field(default=())  # organic: carboxylic acid and amine sites seen


def metal_of(smiles: str) -> tuple[str, int] | None:
    """``(symbol, charge)`` of a lone metal atom or ion (``[Na]``, ``[Ca+2]``), else ``None``."""
    mol = Chem.MolFromSmiles(smiles)
    if mol is None or mol.GetNumAtoms() != 1:
        return None
    atom = mol.GetAtomWithIdx(0)
    if atom.GetSymbol() not in ION_CHARGE or atom.GetTotalNumHs():
        return None
    return atom.GetSymbol(), atom.GetFormalCharge()


@lru_cache(maxsize=1024)
def covalent_salt(metal: str, charge: int, anion: str) -> tuple[str, int, int]:
    """The covalent SMILES of the salt of ``metal`` (ion charge ``charge``) and ``anion`` as the textbook writes
    a precipitate or an oxide (``Cl[Ag]``, ``O=S1(=O)O[Ba]O1``, ``[Ca]=O``), with how many metal ions and anions it
    holds. Each unit of the metal's charge bonds to a negative atom of the anions, another atom first."""
    amol = Chem.MolFromSmiles(anion)
    a_charge = -Chem.GetFormalCharge(amol)
    if charge <= 0 or a_charge <= 0:
        raise ChemAlgebraError(f"no salt of {metal}{charge:+d} and {anion}")
    g = gcd(charge, a_charge)
    n_metal, n_anion = a_charge // g, charge // g
    rw = Chem.RWMol()
    slots: list[int] = []
    for _ in range(n_anion):
        offset = rw.GetNumAtoms()
        rw.InsertMol(amol)
        for a in amol.GetAtoms():
            slots += [offset + a.GetIdx()] * -min(a.GetFormalCharge(), 0)
    for _ in range(n_metal):
        m = rw.AddAtom(Chem.Atom(metal))
        rw.GetAtomWithIdx(m).SetNoImplicit(True)
        taken: list[int] = []
        for _ in range(charge):
            pick = next((s for s in slots if s not in taken), slots[0])
            slots.remove(pick)
            taken.append(pick)
        for atom_idx in dict.fromkeys(taken):
            order = taken.count(atom_idx)
            rw.AddBond(m, atom_idx, Chem.BondType.DOUBLE if order == 2 else Chem.BondType.SINGLE)
            at = rw.GetAtomWithIdx(atom_idx)
            at.SetFormalCharge(at.GetFormalCharge() + order)
    out = rw.GetMol()
    Chem.SanitizeMol(out)
    return _canon(Chem.MolToSmiles(out)), n_metal, n_anion


def ionised(smiles: str) -> tuple[str, str] | None:
    """A neutral metal compound written covalently (``O[Na]``, ``O=C(O[Na])O[Na]``) as ``(metal, anion)``: its
    bonds to the one metal broken, the metal's ion in :data:`ION_CHARGE` and the pieces one anion of the tables."""
    mol = Chem.MolFromSmiles(smiles)
    if mol is None or Chem.GetFormalCharge(mol):
        return None
    metals = {a.GetSymbol() for a in mol.GetAtoms() if a.GetSymbol() in ION_CHARGE}
    if len(metals) != 1 or mol.GetNumAtoms() < 2:
        return None
    (metal,) = metals
    for anion in {_canon(a) for a in ANIONS}:
        try:
            salt, _, _ = covalent_salt(metal, ION_CHARGE[metal], anion)
        except ChemAlgebraError:
            continue
        if salt == _canon(smiles):
            return metal, anion
    return None


@lru_cache(maxsize=1)
def formula_table() -> dict[str, str]:
    """Formula (RDKit's, Hill order) -> canonical SMILES of every inorganic species the tables name: metals, their
    ions, acids, anions, small molecules and the covalent salts of every metal ion with every anion. A formula two
    species share is left out (it names neither)."""
    names: list[str] = [*ACIDS, *ANIONS, *MOLECULES, *OTHER_IONS, "N", "[NH4+]"]
    for metal, charge in ION_CHARGE.items():
        names += [f"[{metal}]", f"[{metal}+{charge}]" if charge > 1 else f"[{metal}+]"]
        for anion in ANIONS:
            try:
                names.append(covalent_salt(metal, charge, anion)[0])
            except ChemAlgebraError:
                continue
    seen: dict[str, set[str]] = {}
    for s in names:
        seen.setdefault(smiles_to_formula(s), set()).add(_canon(s))
    return {f: next(iter(v)) for f, v in seen.items() if len(v) == 1}


CARBOXYLIC = Chem.MolFromSmarts("[CX3](=O)[OX2H1]")
BASIC_AMINE = Chem.MolFromSmarts("[NX3;H2,H1,H0;!$(N-[C,S,P]=[O,S,N]);!$(N-[N,O]);!$(N-a);!$(N-C=C)]")


def _organic(written: str, amount: int, smiles: str | None, comp: Counter) -> Item:
    keys = set(comp) - {"charge"}
    fuel = not comp.get("charge") and "C" in keys and keys <= {"C", "H", "N", "O", "S"}
    groups: list[str] = []
    if smiles is not None:
        mol = Chem.MolFromSmiles(smiles)
        groups += ["carboxylic_acid"] * len(mol.GetSubstructMatches(CARBOXYLIC))
        groups += ["amine"] * len(mol.GetSubstructMatches(BASIC_AMINE))
    return Item(written, amount, smiles, comp, "fuel" if fuel else "other", groups=tuple(groups))


def read_item(written: str, amount: int, repr: Repr) -> Item:
    """One molecule of a line as the rules read it (see :class:`Item`)."""
    comp = composition(written, repr)
    if repr == "formula":
        smiles = formula_table().get(smiles_to_formula_of(written))
        if smiles is None:
            return _organic(written, amount, None, comp)
    else:
        smiles = try_canonical(written)
        if smiles is None:
            return Item(written, amount, None, comp, "other")
    return _classify(written, amount, smiles, comp)


def smiles_to_formula_of(formula: str) -> str:
    """A formula as RDKit writes it (Hill order), the key of :func:`formula_table`."""
    from ...chem.molecule import canonical

    return canonical(formula, "formula")


@lru_cache(maxsize=1)
def _named() -> dict[str, str]:
    kinds = {_canon(s): "acid" for s in ACIDS}
    kinds.update({_canon(s): "base" for s in BASES})
    kinds.update({_canon(s): "anion" for s in ANIONS if _canon(s) not in kinds})
    kinds.update({_canon("O"): "water", _canon("O=O"): "oxygen", _canon("[H][H]"): "hydrogen", _canon("[H+]"): "acid"})
    kinds.update({_canon(f"{x}{x}"): "halogen" for x in HALOGENS})
    return kinds


def _classify(written: str, amount: int, smiles: str, comp: Counter) -> Item:
    kind = _named().get(smiles)
    if kind is not None:
        return Item(written, amount, smiles, comp, kind)
    got = metal_of(smiles)
    if got is not None:
        metal, charge = got
        if charge == 0:
            return Item(written, amount, smiles, comp, "metal", metal=metal)
        if charge > 0:
            return Item(written, amount, smiles, comp, "cation", metal=metal)
        return Item(written, amount, smiles, comp, "other")
    salt = ionised(smiles)
    if salt is not None:
        return Item(written, amount, smiles, comp, "salt", metal=salt[0], anion=salt[1])
    if smiles == _canon("[NH4+]"):
        return Item(written, amount, smiles, comp, "other")
    return _organic(written, amount, smiles, comp)


def read_items(terms: Sequence[tuple[str, int]], repr: Repr) -> list[Item]:
    """Every molecule of a line (``(molecule, amount)`` pairs, each molecule once) as the rules read it."""
    return [read_item(m, k, repr) for m, k in terms]
