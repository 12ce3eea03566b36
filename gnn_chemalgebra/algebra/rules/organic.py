"""Organic rules: reaction SMARTS for textbook classes whose outcome the molecules on the line decide.

A rule fires only when the line names its reagents and nothing else, with exactly one site that can react:

- ``acyl_substitution``: an acyl or sulfonyl chloride, or an open-chain carboxylic anhydride, with one amine,
  alcohol or phenol site: the amide, ester or sulfonamide, and HCl (a tertiary amine or pyridine on the line
  takes it as its hydrochloride, written as ions) or the carboxylic acid;
- ``carbodiimide_coupling``: a carboxylic acid and an amine with a carbodiimide (DCC, DIC, EDC): the amide and
  the urea;
- ``fischer_esterification``: a carboxylic acid and a primary or secondary alcohol with a strong acid catalyst
  (sulfuric, p-toluenesulfonic, methanesulfonic, hydrochloric acid), which is written back: the ester and water;
- ``saponification``: an ester (open-chain) with a hydroxide, every ester group: the carboxylate (ions as the
  input writes them) and the alcohol;
- ``acid_chloride_formation`` (thionyl chloride), ``boc_protection`` (Boc anhydride and one amine),
  ``boc_removal`` (TFA or HCl: the ammonium salt, isobutene, CO2), ``halogen_addition`` (Br2 or Cl2 and one
  C=C), ``epoxidation`` (a peracid and one isolated C=C), ``hydrogenation`` (H2 and one alkene, nitro or azide
  group, nothing else a hydrogenation could touch).

A carboxylic acid and an amine or an alcohol without a coupling agent or catalyst are left to the model: cold they
give a salt or nothing, hot the amide or ester; the line does not say which.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from rdkit import Chem
from rdkit.Chem import AllChem

from .general import Proposal
from .species import ION_CHARGE, Item, _canon, covalent_salt

AMINE = "[NX3;H2,H1;!$(N-[C,S,P]=[O,S,N]);!$(N-[N,O]);!$(N-S(=O)=O);!$(N-C=C)]"
ALCOHOL = "[OX2H1;$(O-[CX4]),$(O-c)]"
PRIMARY_SECONDARY_ALCOHOL = "[OX2H1;$(O-[CX4;H2,H3]),$(O-[CX4H1])]"
CARBOXYLIC = "[CX3](=O)[OX2H1]"
ACYL_CHLORIDE = "[CX3;$(C-[#6,#1]),$(C-O[#6])](=O)Cl"  # acyl chlorides and chloroformates
SULFONYL_CHLORIDE = "[SX4](=O)(=O)Cl"
ANHYDRIDE = "[#6][CX3](=O)[OX2;!R][CX3](=O)[#6]"
CARBODIIMIDE = "N=C=N"
ESTER = "[#6][CX3](=O)!@[OX2][#6;!$(C=[O,S,N])]"
TERTIARY_BASE = "[$([NX3;H0;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-[N,O])]),$([nX2;r6])]"
ACID_CATALYSTS = frozenset({"O=S(=O)(O)O", "Cc1ccc(S(=O)(=O)O)cc1", "CS(=O)(=O)O", "Cl", "O=S(=O)(O)c1ccc(C)cc1"})
NUCLEOPHILES = {"amine": AMINE, "alcohol": ALCOHOL}
TEMPLATES = {  # {nuc}: the nucleophile's site SMARTS, mapped as atom 3
    "acyl": "[C:1](=[O:2])Cl.{nuc}>>[C:1](=[O:2])[*:3]",
    "sulfonyl": "[S:1](=[O:2])(=[O:4])Cl.{nuc}>>[S:1](=[O:2])(=[O:4])[*:3]",
    "anhydride": "[C:1](=[O:2])[O:5][C:6]=[O:7].{nuc}>>[C:1](=[O:2])[*:3].[O:5][C:6]=[O:7]",
    "acid": "[C:1](=[O:2])[OH1].{nuc}>>[C:1](=[O:2])[*:3]",
}
ELECTROPHILES = {"acyl": ACYL_CHLORIDE, "sulfonyl": SULFONYL_CHLORIDE, "anhydride": ANHYDRIDE}


@lru_cache(maxsize=64)
def _pattern(smarts: str) -> Chem.Mol:
    return Chem.MolFromSmarts(smarts)


def _mol(it: Item) -> Chem.Mol | None:
    return Chem.MolFromSmiles(it.smiles) if it.smiles is not None and it.kind in ("fuel", "other") else None


def _sites(it: Item, smarts: str) -> int:
    mol = _mol(it)
    return 0 if mol is None else len(mol.GetSubstructMatches(_pattern(smarts)))


def _one_with(items: Sequence[Item], smarts: str) -> Item | None:
    """The one item with exactly one ``smarts`` site when no other item has one; else ``None``."""
    hits = [(it, n) for it in items if (n := _sites(it, smarts))]
    return hits[0][0] if len(hits) == 1 and hits[0][1] == 1 else None


def _template(kind: str, site: str) -> str:
    return TEMPLATES[kind].replace("{nuc}", site[:-1] + ":3]")


def _react(kind: str, first: Item, second: Item, site: str) -> list[str] | None:
    """The products of ``first`` with ``second``'s ``site`` by the ``kind`` template: one outcome, or ``None``."""
    rxn = AllChem.ReactionFromSmarts(_template(kind, site))
    a, b = _mol(first), _mol(second)
    if a is None or b is None:
        return None
    outcomes: set[tuple[str, ...]] = set()
    for prods in rxn.RunReactants((a, b)):
        names = []
        for p in prods:
            p = Chem.Mol(p)
            try:
                Chem.SanitizeMol(p)
            except (ValueError, RuntimeError):
                names = []
                break
            names.append(_canon(Chem.MolToSmiles(p)))
        if names:
            outcomes.add(tuple(names))
    return list(next(iter(outcomes))) if len(outcomes) == 1 else None


def _nucleophile(items: Sequence[Item], skip: Item) -> tuple[Item, str] | None:
    """The one molecule with one amine, alcohol or phenol site (and no other such site on the line)."""
    found = [(it, kind) for it in items if it is not skip for kind, s in NUCLEOPHILES.items() if _sites(it, s)]
    if len(found) != 1 or sum(_sites(found[0][0], s) for s in NUCLEOPHILES.values()) != 1:
        return None
    return found[0]


def acyl_substitution(items: Sequence[Item]) -> Proposal | None:
    hits = [(it, kind) for it in items for kind, s in ELECTROPHILES.items() if _sites(it, s)]
    if len(hits) != 1 or _sites(hits[0][0], ELECTROPHILES[hits[0][1]]) != 1:
        return None
    elec, kind = hits[0]
    nuc = _nucleophile(items, elec)
    if nuc is None:
        return None
    partner, site = nuc
    bases = [it for it in items if it is not elec and it is not partner and _sites(it, TERTIARY_BASE)]
    if len(items) != 2 + len(bases) or len(bases) > 1 or (bases and _sites(bases[0], TERTIARY_BASE) != 1):
        return None
    made = _react(kind, elec, partner, NUCLEOPHILES[site])
    if made is None:
        return None
    if kind == "anhydride":
        return None if bases else ("acyl_substitution", [elec, partner], made)
    if bases:
        cation = _protonated(bases[0])
        if cation is None:
            return None
        return "acyl_substitution", [elec, partner, bases[0]], [*made, cation, "[Cl-]"]
    return "acyl_substitution", [elec, partner], [*made, "Cl"]


def _protonated(it: Item) -> str | None:
    mol = Chem.RWMol(_mol(it))
    hits = mol.GetSubstructMatches(_pattern(TERTIARY_BASE))
    if len(hits) != 1:
        return None
    atom = mol.GetAtomWithIdx(hits[0][0])
    atom.SetFormalCharge(1)
    atom.SetNumExplicitHs(1)
    atom.SetNoImplicit(True)
    out = mol.GetMol()
    Chem.SanitizeMol(out)
    return _canon(Chem.MolToSmiles(out))


def _acid_and_partner(items: Sequence[Item], site: str) -> tuple[Item, Item] | None:
    acid = _one_with(items, CARBOXYLIC)
    if acid is None or _sites(acid, AMINE) or _sites(acid, ALCOHOL):
        return None
    partner = _one_with([it for it in items if it is not acid], site)
    if partner is None or _sites(partner, CARBOXYLIC):
        return None
    return acid, partner


def carbodiimide_coupling(items: Sequence[Item]) -> Proposal | None:
    agents = [it for it in items if _sites(it, CARBODIIMIDE)]
    if len(agents) != 1 or len(items) != 3:
        return None
    pair = _acid_and_partner([it for it in items if it is not agents[0]], AMINE)
    if pair is None or any(_sites(it, ALCOHOL) for it in pair):
        return None
    made = _react("acid", *pair, AMINE)
    rxn = AllChem.ReactionFromSmarts("[N:1]=[C:2]=[N:3]>>[N:1][C:2](=O)[N:3]")
    ureas = set()
    for (urea,) in rxn.RunReactants((_mol(agents[0]),)):
        urea = Chem.Mol(urea)
        Chem.SanitizeMol(urea)
        ureas.add(_canon(Chem.MolToSmiles(urea)))
    if made is None or len(ureas) != 1:
        return None
    return "carbodiimide_coupling", [*pair, agents[0]], [*made, ureas.pop()]


def fischer_esterification(items: Sequence[Item]) -> Proposal | None:
    catalysts = [it for it in items if it.smiles in {_canon(c) for c in ACID_CATALYSTS}]
    if len(catalysts) != 1 or len(items) != 3:
        return None
    rest = [it for it in items if it is not catalysts[0]]
    pair = _acid_and_partner(rest, PRIMARY_SECONDARY_ALCOHOL)
    if pair is None or _sites(pair[1], ALCOHOL) != 1 or any(_sites(it, AMINE) for it in pair):
        return None
    made = _react("acid", *pair, PRIMARY_SECONDARY_ALCOHOL)
    return None if made is None else ("fischer_esterification", list(pair), [*made, "O"])


def saponification(items: Sequence[Item]) -> Proposal | None:
    esters = [it for it in items if _sites(it, ESTER)]
    bases = [it for it in items if it.smiles == _canon("[OH-]") or (it.kind == "salt" and it.anion == _canon("[OH-]"))]
    if len(esters) != 1 or len(bases) != 1 or _sites(esters[0], CARBOXYLIC):
        return None
    if any(it.kind not in ("cation", "water") for it in items if it is not esters[0] and it is not bases[0]):
        return None
    rxn = AllChem.ReactionFromSmarts("[C:1](=[O:2])[O:3][#6:4]>>[C:1](=[O:2])[O-].[O:3][#6:4]")
    pieces: list[str] = []
    todo = [_mol(esters[0])]
    while todo:
        mol = todo.pop()
        hits = mol.GetSubstructMatches(_pattern(ESTER)) if mol is not None else ()
        if not hits:
            pieces.append(_canon(Chem.MolToSmiles(mol)))
            continue
        prods = rxn.RunReactants((mol,), 1)
        for p in prods[0]:
            p = Chem.Mol(p)
            Chem.SanitizeMol(p)
            todo.append(Chem.MolFromSmiles(Chem.MolToSmiles(p)))
    made = list(dict.fromkeys(pieces))
    base = bases[0]
    if base.kind == "salt" and base.metal is not None:
        made = [covalent_salt(base.metal, ION_CHARGE[base.metal], m)[0] if "-]" in m else m for m in made]
    return "saponification", [esters[0], base], made


def propose_organic(items: Sequence[Item]) -> list[Proposal]:
    """Every organic rule's proposal for the line (SMILES only)."""
    out: list[Proposal] = []
    for rule in ORGANIC_RULES:
        try:
            got = rule(items)
        except (ValueError, RuntimeError, KeyError):
            got = None
        if got is not None:
            out.append(got)
    return out


def _one_pass(mol: Chem.Mol, template: str) -> str | None:
    """``mol`` through a one-molecule template: its one product (every match the same), or ``None``."""
    got: set[str] = set()
    for prods in AllChem.ReactionFromSmarts(template).RunReactants((mol,)):
        p = Chem.Mol(prods[0])
        try:
            Chem.SanitizeMol(p)
        except (ValueError, RuntimeError):
            return None
        got.add(_canon(Chem.MolToSmiles(p)))
    return got.pop() if len(got) == 1 else None


def _named(items: Sequence[Item], smiles: Sequence[str]) -> list[Item]:
    keys = {_canon(s) for s in smiles}
    return [it for it in items if it.smiles in keys]


SOCL2 = "O=S(Cl)Cl"
BOC2O = "CC(C)(C)OC(=O)OC(=O)OC(C)(C)C"
ALKENE = "[C;!a]=[C;!a]"
ISOLATED_ALKENE = "[C;!a;!$(C-[C,S,N]=O)]=[C;!a;!$(C-[C,S,N]=O)]"
PERACID = "[CX3](=O)[OX2][OH1]"
BOC = "[NX3]C(=O)OC([CH3])([CH3])[CH3]"
# groups a hydrogenation may also reduce or cleave: a line holding one of them is left to the model
OVER_REDUCIBLE = ("C#C", "[CX3H1]=O", "C=N", "C#N", "c[CH2][O,N]", "[N+](=O)[O-]", "N=[N+]=[N-]", "O-O", "S")
REDUCIBLE = {
    "alkene": ("[C;!a]=[C;!a]", "[C:1]=[C:2]>>[C:1][C:2]", ()),
    "nitro": ("[N+](=O)[O-]", "[c,C:1][N+:2](=O)[O-]>>[c,C:1][N+0:2]", ("O",)),
    "azide": ("N=[N+]=[N-]", "[C:1][N:2]=[N+]=[N-]>>[C:1][N:2]", ("N#N",)),
}


def acid_chloride_formation(items: Sequence[Item]) -> Proposal | None:
    """A carboxylic acid and thionyl chloride: the acyl chloride, SO2 and HCl."""
    agents = _named(items, [SOCL2])
    acid = _one_with(items, CARBOXYLIC)
    if len(items) != 2 or len(agents) != 1 or acid is None or _sites(acid, AMINE) or _sites(acid, ALCOHOL):
        return None
    made = _one_pass(_mol(acid), "[C:1](=[O:2])[OH1]>>[C:1](=[O:2])Cl")
    return None if made is None else ("acid_chloride_formation", [acid, agents[0]], [made, "O=S=O", "Cl"])


def boc_protection(items: Sequence[Item]) -> Proposal | None:
    """Boc anhydride and one amine site (a tertiary amine beside it takes no part): the carbamate, tert-butanol and
    CO2."""
    agents = _named(items, [BOC2O])
    if len(agents) != 1:
        return None
    rest = [it for it in items if it is not agents[0]]
    nuc = _nucleophile(rest, agents[0])
    bases = [it for it in rest if nuc is not None and it is not nuc[0] and _sites(it, TERTIARY_BASE)]
    if nuc is None or nuc[1] != "amine" or len(rest) != 1 + len(bases) or len(bases) > 1:
        return None
    made = _one_pass(_mol(nuc[0]), AMINE[:-1] + ":1]>>[*:1]C(=O)OC(C)(C)C")
    return None if made is None else ("boc_protection", [agents[0], nuc[0]], [made, "CC(C)(C)O", "O=C=O"])


def halogen_addition(items: Sequence[Item]) -> Proposal | None:
    """Bromine or chlorine and one alkene C=C (no other C=C or C#C on the line): the vicinal dihalide."""
    halogens = _named(items, ["BrBr", "ClCl"])
    alkenes = [it for it in items if _sites(it, ALKENE)]
    if len(items) != 2 or len(halogens) != 1 or len(alkenes) != 1 or _sites(alkenes[0], ALKENE) != 1:
        return None
    if _sites(alkenes[0], "C#C"):
        return None
    x = "Br" if halogens[0].smiles == "BrBr" else "Cl"
    made = _one_pass(_mol(alkenes[0]), f"[C:1]=[C:2]>>[C:1]({x})[C:2]{x}")
    return None if made is None else ("halogen_addition", [alkenes[0], halogens[0]], [made])


def epoxidation(items: Sequence[Item]) -> Proposal | None:
    """A peracid and one isolated alkene C=C (no other C=C): the epoxide and the peracid's acid."""
    peracids = [it for it in items if _sites(it, PERACID) == 1]
    alkenes = [it for it in items if _sites(it, ALKENE)]
    if len(items) != 2 or len(peracids) != 1 or len(alkenes) != 1 or alkenes[0] is peracids[0]:
        return None
    if _sites(alkenes[0], ALKENE) != 1 or _sites(alkenes[0], ISOLATED_ALKENE) != 1:
        return None
    epoxide = _one_pass(_mol(alkenes[0]), "[C:1]=[C:2]>>[C:1]1[C:2]O1")
    acid = _one_pass(_mol(peracids[0]), "[C:1](=[O:2])[O:3][OH1]>>[C:1](=[O:2])[O:3]")
    if epoxide is None or acid is None:
        return None
    return "epoxidation", [alkenes[0], peracids[0]], [epoxide, acid]


def hydrogenation(items: Sequence[Item]) -> Proposal | None:
    """Hydrogen (over a metal catalyst, written back, or none) and a molecule with one reducible group and nothing
    else a hydrogenation could touch: an alkene to the alkane, a nitro group to the amine and water, an azide to
    the amine and N2."""
    h2 = [it for it in items if it.kind == "hydrogen"]
    catalysts = _named(items, ["[Pd]", "[Pt]", "[Ni]"])
    rest = [it for it in items if it not in h2 and it not in catalysts]
    if len(h2) != 1 or len(catalysts) > 1 or len(rest) != 1:
        return None
    sub = rest[0]
    found = [(k, v) for k, v in REDUCIBLE.items() if _sites(sub, v[0])]
    if len(found) != 1 or _sites(sub, found[0][1][0]) != 1:
        return None
    kind, (site, template, extra) = found[0]
    if any(_sites(sub, g) for g in OVER_REDUCIBLE if g != site):
        return None
    made = _one_pass(_mol(sub), template)
    return None if made is None else ("hydrogenation", [sub, h2[0]], [made, *extra])


def boc_removal(items: Sequence[Item]) -> Proposal | None:
    """A Boc carbamate (one) with a strong acid (TFA, HCl): the ammonium salt of the amine (as ions), isobutene
    and CO2."""
    acids = _named(items, ["OC(=O)C(F)(F)F", "Cl"])
    bocs = [it for it in items if _sites(it, BOC)]
    if len(items) != 2 or len(acids) != 1 or len(bocs) != 1 or _sites(bocs[0], BOC) != 1:
        return None
    if _sites(bocs[0], AMINE) or _sites(bocs[0], TERTIARY_BASE):
        return None  # a second basic site: which one takes the proton is not written
    cation = _one_pass(_mol(bocs[0]), "[N:1]C(=O)OC([CH3])([CH3])[CH3]>>[N+:1]")
    anion = "[Cl-]" if acids[0].smiles == "Cl" else _canon("O=C([O-])C(F)(F)F")
    if cation is None:
        return None
    return "boc_removal", [bocs[0], acids[0]], [cation, anion, "C=C(C)C", "O=C=O"]


ORGANIC_RULES = (
    acyl_substitution,
    carbodiimide_coupling,
    fischer_esterification,
    saponification,
    acid_chloride_formation,
    boc_protection,
    halogen_addition,
    epoxidation,
    hydrogenation,
    boc_removal,
)
