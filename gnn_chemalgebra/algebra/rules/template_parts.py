"""The parts the reaction templates are written with (:mod:`.templates`): the template and variant types, the
substrate-site SMARTS, the bases that take up a hydrogen halide, the solvents, the pools of small common partners
and a few simple substrates besides the training molecules.
"""

from __future__ import annotations

from dataclasses import dataclass

from rdkit import Chem

from .organic import ALCOHOL, AMINE


def canonical(smiles: str) -> str | None:
    """RDKit's canonical SMILES, stable when read again (``None``: unreadable). Every species a template writes
    is canonical, as the records' molecules and the atom-mapped reactions' fragments are."""
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return None
    again = Chem.MolFromSmiles(Chem.MolToSmiles(mol))
    return Chem.MolToSmiles(again) if again is not None else None


def _canonical(smiles: str) -> str:
    out = canonical(smiles)
    if out is None:
        raise ValueError(f"unreadable SMILES in a template: {smiles!r}")
    return out


PRIMARY_SECONDARY_AMINE = AMINE[:-1] + ";!$(N-a)]"  # AMINE without anilines
NUC_AMINE = AMINE[:-1] + ":{n}]"  # amine site as a mapped atom
CARBON_HALIDE = "[CX4;H2,H3;!$(C[O,N,S,F]):1][Cl,Br,I:2]"  # methyl or primary alkyl halide
TERMINAL_ALKENE = "[CH2:1]=[CX3;!$(C[!#6;!#1]);!$(C[$(C=[O,N,S]),$(C#N)]);!$(C=C=*):2]"
PLAIN = "!$(C[!#6;!#1]);!$(C[$(C=[O,N,S]),$(C#N)])"  # an alkene carbon without heteroatoms or conjugation
TRISUBSTITUTED_ALKENE = f"[CH1;{PLAIN}:1]=[CX3H0;!R;{PLAIN}:2]"
ISOLATED_ALKENE = "[C;!$(C[!#6;!#1]);!$(C[$(C=[O,N,S]),$(C#N)]):{a}]=[C;!$(C[!#6;!#1]);!$(C[$(C=[O,N,S]),$(C#N)]):{b}]"
ALDEHYDE = "[CH1;$(C[#6]):1]=[O:2]"
KETONE = "[CX3;$(C(=O)([#6])[#6]):1]=[O:2]"
CARBONYL = "[CX3;$(C(=O)([#6])[#6]),$([CH1](=O)[#6]):1]=[O:2]"
ACID = "[C;$(C[#6]):1](=[O:2])[OH:3]"
ESTER = "[C;$(C[#6]):1](=[O:2])!@[O:3][CX4:4]"
ALCOHOL_SITE = "[OX2H1;$(O[CX4]);!$(OC[!#6;!#1;!O]):1]"
PHENOL_OR_ALCOHOL = ALCOHOL[:-1] + ":1]"
OXIDISABLE = "[CH2,CH1;$(C[#6]);!$(C[!#6;!#1;!O]);!$(C=*):1][OH:2]"
SECONDARY_ALCOHOL = "[CH1;$(C([#6])[#6]);!$(C[!#6;!#1;!O]):1][OH:2]"
ARYL_HALIDE = "[c:1][Br,I:2]"
DONOR = "[$([OX2][CH3]),$([OX2][CH2][CH3]),$([CH3]),$([CH2][CH3]),$([NH]C(C)=O)]"
PARA_TO_DONOR = "[cH;$([cH]1[cH]cc(-" + DONOR + ")c[cH]1):1]"  # para to a donor, its ring CH or fused

ACIDIC_H = ("[OX2H]", "[NX3;H1,H2]", "[SX2H]", "[nH]", "C#[CH]")
HYDRIDE_SENSITIVE = ("[CX3H1](=O)", "[#6][CX3](=O)[#6]", "C#N", "[N+](=O)[O-]", "[CX3](=O)[OX2H1]", "[CX3](=O)Cl")
REDUCIBLE = ("C#C", "[N+](=O)[O-]", "N=[N+]=[N-]", "[CX3]=[NX2]", "[OX2,NX3][CH2]c1ccccc1", "[C;!a]=[C;!a]", "[I]")
ELECTROPHILES = ("[CX3](=O)[Cl,Br]", "[SX4](=O)(=O)Cl", "[CX3](=O)O[CX3]=O", "N=C=O", "C1OC1")
ACYL_FORBID = ("[CX3](=O)[OX2H1]", *ELECTROPHILES)

BASES = {  # a base that takes up a hydrogen halide -> its conjugate acid
    "CCN(CC)CC": "CC[NH+](CC)CC",
    "CCN(C(C)C)C(C)C": "CC[NH+](C(C)C)C(C)C",
    "c1ccncc1": "c1cc[nH+]cc1",
    "c1c[nH]cn1": "c1c[nH]c[nH+]1",
}
BASES = {_canonical(k): _canonical(v) for k, v in BASES.items()}
SOLVENTS = {
    "polar": ("CN(C)C=O", "CS(C)=O", "CC#N"),
    "ether": ("C1CCOC1", "CCOCC", "C1COCCO1"),
    "chlorinated": ("ClCCl", "ClC(Cl)Cl", "ClCCCl"),
    "alcohol": ("CO", "CCO"),
    "arene": ("Cc1ccccc1",),
}
POOLS = {  # small common partners
    "azide": ("[N-]=[N+]=[N-]",),
    "cyanide": ("[C-]#N",),
    "iodide": ("[I-]",),
    "thiolate": ("C[S-]", "CC[S-]", "[S-]c1ccccc1", "[SH-]"),
    "alkoxide": ("C[O-]", "CC[O-]"),
    "tbuoxide": ("CC(C)(C)[O-]",),
    "ethoxide": ("CC[O-]",),
    "hydroxide": ("[OH-]",),
    "water": ("O",),
    "amine": ("C1CCNCC1", "C1COCCN1", "CNC", "C1CCNC1", "CN1CCNCC1", "NCc1ccccc1", "CC(C)N", "CCN", "CN"),
    "primary_amine": ("CN", "CCN", "NCc1ccccc1", "Nc1ccccc1", "CC(C)N", "NC1CCCCC1", "CCCCN"),
    "alcohol": ("CO", "CCO", "CC(C)O", "CCCO", "CCCCO", "OCc1ccccc1"),
    "hydrogen_halide": ("Br", "Cl", "I"),
    "halogen": ("BrBr", "ClCl"),
    "peracid": ("O=C(OO)c1cccc(Cl)c1", "CC(=O)OO"),
    "nmo": ("C[N+]1([O-])CCOCC1",),
    "ozone": ("[O-][O+]=O",),
    "dms": ("CSC",),
    "peroxide": ("OO",),
    "grignard": ("C[Mg]Br", "CC[Mg]Br", "Br[Mg]c1ccccc1", "CC(C)[Mg]Cl", "C=C[Mg]Br", "C[Mg]I"),
    "ylide": ("C=P(c1ccccc1)(c1ccccc1)c1ccccc1", "CCOC(=O)C=P(c1ccccc1)(c1ccccc1)c1ccccc1"),
    "methyl_ketone": ("CC(C)=O", "CC(=O)c1ccccc1", "CC(=O)c1ccc(C)cc1"),
    "active_methylene": ("N#CCC#N", "CCOC(=O)CC(=O)OCC", "COC(=O)CC(=O)OC"),
    "glycol": ("OCCO",),
    "acyl_chloride": ("CC(=O)Cl", "O=C(Cl)c1ccccc1", "CCC(=O)Cl", "O=C(Cl)C1CC1"),
    "anhydride": ("CC(=O)OC(C)=O",),
    "sulfonyl_chloride": ("CS(=O)(=O)Cl", "Cc1ccc(S(=O)(=O)Cl)cc1"),
    "thionyl_chloride": ("O=S(Cl)Cl",),
    "hydrobromic_acid": ("Br",),
    "hydrogen_cyanide": ("C#N",),
    "secondary_amine": ("C1CCNC1", "C1CCNCC1", "C1COCCN1"),
    "michael_acceptor": ("C=CC(=O)OC", "C=CC(=O)OCC", "C=CC(C)=O", "C=CC#N"),
    "magnesium": ("[Mg]",),
    "tbu_chloride": ("CC(C)(C)Cl",),
    "organic_azide": ("[N-]=[N+]=NCc1ccccc1",),
    "nitric_acid": ("O=[N+]([O-])O",),
    "bromine": ("BrBr",),
    "boronic_acid": ("OB(O)c1ccccc1", "Cc1ccc(B(O)O)cc1", "COc1ccc(B(O)O)cc1", "OB(O)c1ccc(F)cc1"),
    "alkyne": ("C#Cc1ccccc1", "C#C[Si](C)(C)C", "C#CCCCC", "C#CCO"),
    "heck_alkene": ("C=CC(=O)OC", "C=CC(=O)OCC", "C=Cc1ccccc1", "C=CC#N", "C=CC(=O)OC(C)(C)C"),
    "diene": ("C=CC=C", "C1=CCC=C1", "C=C(C)C(C)=C"),
    "isocyanate": ("O=C=Nc1ccccc1", "CN=C=O", "CCN=C=O", "CC(C)N=C=O"),
    "boc2o": ("CC(C)(C)OC(=O)OC(=O)OC(C)(C)C",),
    "cbz_chloride": ("O=C(Cl)OCc1ccccc1",),
    "benzyl_bromide": ("BrCc1ccccc1",),
    "alkyl_halide": ("CI", "CCBr", "C=CCBr", "CCCBr", "CCI"),
    "silyl_chloride": ("CC(C)(C)[Si](C)(C)Cl", "CC(C)[Si](Cl)(C(C)C)C(C)C"),
    "fluoride": ("[F-]",),
}
POOLS = {k: tuple(_canonical(s) for s in v) for k, v in POOLS.items()}
# a few simple substrates besides the training molecules (classes whose sites patents rarely hold)
COMMON_SUBSTRATES = (
    "C=CCCCC",
    "C=Cc1ccccc1",
    "C=C(C)c1ccccc1",
    "C=CCCCCCC",
    "C=CCc1ccccc1",
    "C=CC1CCCCC1",
    "C=CCCO",
    "C=C(C)CCC",
    "C=CCCCCCCCC",
    "C=Cc1ccc(C)cc1",
    "C=Cc1ccc(Cl)cc1",
    "C=CCC(C)C",
    "COc1ccccc1",
    "Cc1ccccc1",
    "CCc1ccccc1",
    "CC(=O)Nc1ccccc1",
    "CCOc1ccccc1",
    "CCCCCBr",
    "CCCCCCBr",
    "BrCCc1ccccc1",
    "CCCCCl",
    "ICCCC",
    "CCC(C)(C)O",
    "CC(C)(O)CC",
    "OC1(C)CCCCC1",
    "CCCCC(C)(C)O",
    "CC(O)CCc1ccccc1",
    "OC1CCCC1",
    "OCCCCc1ccccc1",
    "OCCc1ccccc1",
    "O=CCCc1ccccc1",
    "O=CC1CCCCC1",
    "CCCCCC=O",
    "O=Cc1ccc(Cl)cc1",
    "COc1ccc(C=O)cc1",
    "Cc1ccc(C=O)cc1",
    "O=C1CCCC1",
    "CCC(=O)CC",
    "CC(=O)CCc1ccccc1",
    "O=C(c1ccccc1)c1ccccc1",
    "CCCCC(=O)O",
    "O=C(O)Cc1ccccc1",
    "O=C(O)c1ccc(Cl)cc1",
    "CCCCC(=O)OC",
    "COC(=O)CCc1ccccc1",
    "CCOC(=O)c1ccc(Cl)cc1",
    "CCCCC#N",
    "N#CCc1ccccc1",
    "CCCCC#C",
    "C#CCCc1ccccc1",
    "Brc1ccc(C)cc1",
    "Ic1ccc(OC)cc1",
    "Brc1cccc(C)c1",
)


@dataclass(frozen=True)
class Variant:
    """Conditions as written: ``reagents`` written back, ``co`` consumed (no atom in the product), their
    ``byproducts``, and a ``base`` (a key of :data:`BASES`) that takes up a hydrogen halide."""

    reagents: tuple[str, ...] = ()
    co: tuple[str, ...] = ()
    byproducts: tuple[str, ...] = ()
    base: str | None = None


@dataclass(frozen=True)
class Template:
    """One reaction class: ``name`` (unique), ``cls`` (the class a chemist names), the reaction SMARTS
    (substrate first), one :data:`POOLS` name per partner template, the variants, the substrate groups that
    forbid it, the solvents a line may add, and the rule that picks among several sites (``zaitsev``,
    ``hofmann``: eliminations; default none: a substrate with two sites is skipped)."""

    name: str
    cls: str
    smarts: str
    partners: tuple[str, ...] = ()
    variants: tuple[Variant, ...] = (Variant(),)
    forbid: tuple[str, ...] = ()
    solvents: tuple[str, ...] = ()
    pick: str | None = None


def variant(reagents: str = "", co: str = "", byproducts: str = "", base: str | None = None) -> Variant:
    """A variant from dot-separated SMILES (the way a chemist writes a salt: ``[K+].[K+].[O-]C([O-])=O``)."""

    def parts(s: str) -> tuple[str, ...]:
        return tuple(_canonical(p) for p in s.split(".") if p)

    return Variant(parts(reagents), parts(co), parts(byproducts), _canonical(base) if base else None)


H2_PD = (variant("[Pd]", "[H][H]"), variant("[Pd].CO", "[H][H]"), variant("[Pt]", "[H][H]"))
AMINE_BASES = (variant(), variant(base="CCN(CC)CC"), variant(base="CCN(C(C)C)C(C)C"), variant(base="c1ccncc1"))
NAH = (variant("[Na+]", "[H-]", "[H][H]"),)
NA_K = (variant("[Na+]"), variant("[K+]"))
HYDROXIDES = (variant("[Na+]"), variant("[Li+]"), variant("[K+]"))
DONE = ".[*-:2]"  # the leaving halide as its ion
ACID_CAT = (variant("OS(=O)(=O)O"), variant("Cc1ccc(S(=O)(=O)O)cc1"))


def sn2_template(name: str, nuc: str, product: str, pool: str, variants: tuple[Variant, ...] = NA_K) -> Template:
    return Template(
        name, "SN2", f"{CARBON_HALIDE}.{nuc}>>{product}{DONE}", (pool,), variants, ELECTROPHILES[:1],
        SOLVENTS["polar"],
    )  # fmt: skip
