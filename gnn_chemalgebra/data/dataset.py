"""Examples and datasets for the GNN: source bags, labels from the builder's ``meta-<split>.jsonl``.

Labels per DISTINCT source molecule: its coefficient in the base reaction ``nu`` (-2..+2; sign = reactant /
reagent / product already present). Per bag: the NEW products (in ``nu`` with n > 0, absent from the source).
The largest new product (most atoms) is the *main* product, obtained at decode time as the exact composition
remainder; the others (by-products, the artificial leftover chain) are classes of a vocabulary built on the
training split (index 0 = ``<unk>``).

:func:`write_toy_variant` writes a tiny synthetic variant in the builder's layout (for tests and smoke runs).
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from ..algebra.extent import S_IN, S_OUT, extent_posterior, group_terms
from ..algebra.roles import PRODUCT, REACTANT, REAGENT, role_class
from ..chem.bag import Term, format_bag, parse_bag
from ..chem.composition import CHARGE_KEY, smiles_composition
from ..chem.leftover import leftover_molecule
from ..chem.molecule import composition, smiles_to_formula
from ..chem.smiles import canonical_smiles
from ..errors import InputError
from ..io import atomic_write_lines, read_lines
from .featurize import CHARGE_INDEX, N_COEF_CLASSES, N_EXTENT_FEATURES, Featurizer, comp_vector, extent_features
from .layout import split_files, variant_props

if TYPE_CHECKING:
    from .bagbatch import BagBatch
    from .bagdata import BagData

LEFT_CHARGE_SHIFT = 2  # leftover charge class = charge + 2 (see models.gnn.CHARGE_SHIFT)


def atom_count(comp: dict[str, int]) -> int:
    return sum(v for k, v in comp.items() if k != CHARGE_KEY)


@dataclass
class BagExample:
    terms: list[Term]
    mols: list[str]
    totals: list[int]
    nterms: list[int]
    vtype: int = 1
    cset: str = "in"
    nu_in: list[int] | None = None
    main: str | None = None
    extras: list[str] = field(default_factory=list)
    xi: int | None = None
    nu: dict[str, int] | None = None
    tgt: str | None = None
    rxn: int | None = None
    roles_only: bool = False  # a line whose leftover is not a training label (gnnca data formula-extra)
    src_roles: tuple[str, ...] | None = None  # the meta's role of each source term (training-time rewrites)
    tgt_roles: tuple[str, ...] | None = None  # the meta's role of each target term


def example_from_terms(terms: list[Term], vtype: int = 1, cset: str = "in") -> BagExample:
    groups = group_terms(terms)
    mols = sorted(groups)
    return BagExample(
        terms=terms,
        mols=mols,
        totals=[sum(groups[m]) for m in mols],
        nterms=[len(groups[m]) for m in mols],
        vtype=vtype,
        cset=cset,
    )


def attach_labels(ex: BagExample, meta: dict[str, Any], repr: str) -> BagExample:
    nu = {m: int(n) for m, n in meta["nu"]}
    ex.nu = nu
    ex.nu_in = [nu.get(m, 0) for m in ex.mols]
    present = set(ex.mols)
    new = [m for m, n in nu.items() if n > 0 and m not in present]
    if new:
        new.sort(key=lambda m: (-atom_count(composition(m, repr)), m))
        ex.main, ex.extras = new[0], sorted(set(new[1:]))
    ex.xi = int(meta["xi"])
    ex.cset = meta.get("set", "in")
    ex.rxn = meta.get("rxn")
    ex.roles_only = bool(meta.get("roles_only", False))
    return ex


def attach_roles(ex: BagExample, meta: dict[str, Any]) -> BagExample:
    """The meta's role of every source and target term (what the training-time rewrites read), when it has them;
    interned, so a role costs one pointer per term however many lines there are."""
    if isinstance(meta.get("src_roles"), list) and isinstance(meta.get("tgt_roles"), list):
        ex.src_roles = tuple(sys.intern(str(r)) for r in meta["src_roles"])
        ex.tgt_roles = tuple(sys.intern(str(r)) for r in meta["tgt_roles"])
    return ex


def load_examples(
    data_dir: str | Path, variant: str, split: str, limit: int | None = None, roles: bool = False
) -> list[BagExample]:
    """The split's lines as labelled examples; ``roles``: also each term's role (:func:`attach_roles`)."""
    src_p, tgt_p, meta_p = split_files(Path(data_dir), variant, split)
    props = variant_props(variant)
    src, tgt, meta_lines = read_lines(src_p), read_lines(tgt_p), read_lines(meta_p)
    if not (len(src) == len(tgt) == len(meta_lines)):
        counts = f"{src_p.name} {len(src):,}, {tgt_p.name} {len(tgt):,}, {meta_p.name} {len(meta_lines):,}"
        raise InputError(f"the split's files must have one line per reaction each, but they have {counts} lines",
                         path=str(src_p.parent))  # fmt: skip
    if not src:
        raise InputError(f"{src_p.name} has no lines: nothing to read", path=str(src_p.parent))
    n = len(src) if not limit else min(limit, len(src))
    out = []
    for i in range(n):
        terms = parse_bag(src[i], path=str(src_p), line=i + 1)
        ex = example_from_terms(terms, vtype=int(props["type"]))
        meta = _meta_record(meta_lines[i], meta_p, i + 1)
        attach_labels(ex, meta, str(props["repr"]))
        if roles:
            attach_roles(ex, meta)
        ex.tgt = tgt[i]
        out.append(ex)
    return out


def _meta_record(text: str, path: Path, line: int) -> dict[str, Any]:
    """One ``meta-<split>.jsonl`` line: a JSON object with ``nu`` (pairs) and ``xi``; else one located error."""
    try:
        rec = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"not a JSON object ({e.msg})", path=str(path), line=line) from None
    if not isinstance(rec, dict):
        raise InputError("not a JSON object", path=str(path), line=line)
    missing = [k for k in ("nu", "xi") if k not in rec]
    if missing:
        raise InputError("missing field(s) " + ", ".join(repr(k) for k in missing), path=str(path), line=line)
    try:
        for _m, n in rec["nu"]:
            int(n)
        int(rec["xi"])
    except (TypeError, ValueError):
        raise InputError(
            "'nu' must be [molecule, integer] pairs and 'xi' an integer", path=str(path), line=line
        ) from None
    return rec


class ExtraVocab:
    """Vocabulary of non-main new products (strings in the variant's representation); 0 = ``<unk>``."""

    def __init__(self, items: Sequence[str]) -> None:
        self.items = ["<unk>", *[s for s in items if s != "<unk>"]]
        self.index = {s: i for i, s in enumerate(self.items)}

    @classmethod
    def build(cls, examples: Sequence[BagExample], size: int = 512, min_count: int = 1) -> ExtraVocab:
        cnt: Counter = Counter()
        for ex in examples:
            if ex.roles_only:  # its by-products are not labels (and mostly ones the benchmark never writes)
                continue
            cnt.update(ex.extras)
            if ex.main is not None:  # mains are remainders, but knowing them helps SMILES lookups
                cnt[ex.main] += 0
        ranked = [s for s, c in sorted(cnt.items(), key=lambda kv: (-kv[1], kv[0])) if c >= min_count]
        return cls(ranked[: max(size - 1, 0)])

    def extended(self, examples: Sequence[BagExample], size: int, min_count: int = 1) -> ExtraVocab:
        """This vocabulary in its order, then the by-products of ``examples`` it lacks, commonest first, up to
        ``size`` entries in all (a fine-tune that meets by-products its start model never wrote: water, an
        alcohol)."""
        new = [s for s in ExtraVocab.build(examples, 10**9, min_count).items[1:] if s not in self.index]
        return ExtraVocab([*self.items[1:], *new][: max(size - 1, len(self) - 1)])

    def __len__(self) -> int:
        return len(self.items)

    def encode(self, extras: Sequence[str]) -> torch.Tensor:
        y = torch.zeros(1, len(self.items))
        for e in extras:
            y[0, self.index.get(e, 0)] = 1.0
        return y


def to_data(ex: BagExample, feat: Featurizer, vocab: ExtraVocab, idx: int = 0, labels: bool = True) -> BagData:
    """One bag; with ``labels`` (and a labelled example) also the training targets."""
    d = feat.bag(ex.mols, ex.totals, ex.nterms)
    d.idx = torch.tensor([idx])
    d.vtype = torch.tensor([ex.vtype])
    if ex.nu_in is None or not labels:
        return d
    d.y_role = torch.tensor([role_class(n) for n in ex.nu_in])
    d.y_extra = vocab.encode(ex.extras)
    # Structured leftover labels: the composition of the new non-main products (the artificial leftover
    # chain, rarely a second by-product) per element column; the charge column is shifted to stay >= 0.
    left = torch.zeros(1, feat.settings()["comp_dim"])
    for e in ex.extras:
        left[0] += feat.molecule(e)[1]
    left[0, CHARGE_INDEX] += LEFT_CHARGE_SHIFT
    d.y_left = left.round().long().clamp(min=0)
    d.w_left = torch.tensor([0.0 if ex.roles_only else 1.0])  # weight of the by-product and leftover labels
    # Learned extent scorer: candidates from the GOLD roles (Type 2 only; Type 1 is determined).
    groups = group_terms(ex.terms)
    nu = {m: n for m, n in (ex.nu or {}).items() if m in groups or n > 0}
    cands, post = extent_posterior(ex.terms, nu, ex.cset) if ex.vtype == 2 else ([], [])
    if cands and ex.xi in cands:
        feats = extent_features(cands, groups, nu, post)
        d.ext_feat = torch.tensor(feats, dtype=torch.float)
        d.ext_y = torch.tensor([float(c == ex.xi) for c in cands])
    else:
        d.ext_feat = torch.zeros(0, N_EXTENT_FEATURES)
        d.ext_y = torch.zeros(0)
    d.ext_graph = torch.zeros(d.ext_y.numel(), dtype=torch.long)
    # Naive ablation labels: output total per input molecule, and the new products' coefficient (= xi).
    tgt_tot: dict[str, int] = {}
    if ex.tgt is not None:
        for t in parse_bag(ex.tgt):
            tgt_tot[t.mol] = tgt_tot.get(t.mol, 0) + t.coef
    d.y_coef = torch.tensor([min(tgt_tot.get(m, 0), N_COEF_CLASSES - 1) for m in ex.mols])
    has_new = ex.main is not None or bool(ex.extras)
    d.y_newcoef = torch.tensor([min(ex.xi or 0, N_COEF_CLASSES - 1) if has_new else -100])
    return d


def collate_examples(examples: Sequence[BagExample], feat: Featurizer) -> BagBatch:
    """The unlabelled batch of ``examples``, field by field what collating ``to_data(ex, feat, vocab, i,
    labels=False)`` of each (position ``i``) gives, built from the featuriser's per-molecule cache without a
    per-bag object (the predictor's path; ``tests/data/test_featurize_batch.py`` compares them)."""
    from .bagbatch import BagBatch

    fields = feat.bag_fields([(ex.mols, ex.totals, ex.nterms) for ex in examples])
    fields["idx"] = torch.arange(len(examples))
    fields["vtype"] = torch.tensor([ex.vtype for ex in examples], dtype=torch.long)
    return BagBatch(fields, len(examples), int(fields["ptr"][-1]))


class BagDataset(torch.utils.data.Dataset):
    """Bags as :class:`BagData`, precomputed in memory or built on access (``lazy``)."""

    def __init__(self, examples: Sequence[BagExample], feat: Featurizer, vocab: ExtraVocab, lazy: bool = False) -> None:
        self.examples = list(examples)
        self.feat, self.vocab = feat, vocab
        # lazy: build each bag's tensors on access (molecule graphs stay cached by the featuriser), so memory
        # grows with the number of examples, not with their tensors -- what a paper-size x5 split needs.
        self.data = None if lazy else [to_data(ex, feat, vocab, i) for i, ex in enumerate(self.examples)]

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, i: int) -> BagData:
        if self.data is None:
            return to_data(self.examples[i], self.feat, self.vocab, i)
        return self.data[i]


# --------------------------------------------------------------------------- toy data (tests, smoke runs)
_TOY_REACTIONS: tuple[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    (("CCO", "CC(=O)O"), ("O=S(=O)(O)O",), ("CCOC(C)=O", "O")),
    (("CC(=O)Cl", "NCc1ccccc1"), ("CCN(CC)CC",), ("CC(=O)NCc1ccccc1", "Cl")),
    (("C=CC", "[H][H]"), ("[Pd]",), ("CCC",)),
    (("Brc1ccccc1", "OB(O)c1ccccc1"), ("[Pd]", "O"), ("c1ccc(-c2ccccc2)cc1",)),
    (("CC(C)(C)OC(=O)NC1CCCC1",), ("ClCCl",), ("NC1CCCC1",)),
    (("O=C(O)c1ccccc1", "CO"), (), ("COC(=O)c1ccccc1", "O")),
    (("CI", "Oc1ccccc1"), ("O=C([O-])[O-].[K+]",), ("COc1ccccc1",)),
    (("N#Cc1ccccc1", "[H][H]"), ("[Ni]",), ("NCc1ccccc1",)),
    (("CC(=O)OC(C)=O", "Nc1ccccc1"), ("c1ccncc1",), ("CC(=O)Nc1ccccc1",)),
    (("O=C(Cl)c1ccccc1", "OCC"), ("CCN(CC)CC",), ("CCOC(=O)c1ccccc1",)),
)


def _balanced(reactants, reagents, products):
    rc, pc = Counter(), Counter()
    for s in reactants:
        rc.update(smiles_composition(s))
    for s in products:
        pc.update(smiles_composition(s))
    r_left, p_left = leftover_molecule(rc - pc), leftover_molecule(pc - rc)
    if (r_left is None and rc - pc) or (p_left is None and pc - rc):
        return None  # the builder drops these too
    prods = list(products) + ([r_left] if r_left else [])
    reacts = list(reactants) + ([p_left] if p_left else [])
    reagents = [m for s in reagents for m in s.split(".")]
    return (
        [canonical_smiles(s) for s in reacts],
        [canonical_smiles(s) for s in reagents],
        [canonical_smiles(s) for s in prods],
    )


def write_toy_variant(out: str | Path, variant: str, n: dict[str, int] | None = None, seed: int = 0) -> Path:
    """A tiny synthetic variant in the builder's layout (src/tgt/meta), from a handful of base reactions."""
    props = variant_props(variant)
    rng = random.Random(seed)
    n = n or {"train": 48, "valid": 16, "test_in": 16, "test_out": 16}
    conv = smiles_to_formula if props["repr"] == "formula" else (lambda s: s)
    base = [b for b in (_balanced(*r) for r in _TOY_REACTIONS) if b is not None]
    for split, count in n.items():
        S = S_OUT if split == "test_out" else S_IN
        src_l, tgt_l, meta_l = [], [], []
        for i in range(count):
            rxn = i % len(base)
            R, G, P = ([conv(s) for s in side] for side in base[rxn])
            nu: Counter = Counter()
            for m in R:
                nu[m] -= 1
            for m in P:
                nu[m] += 1
            if props["type"] == 1:
                k = rng.choice(S)
                xi, kd = k, {m: k for m in [*R, *G, *P]}
                src = [(k, m, REACTANT) for m in R] + [(k, m, REAGENT) for m in G]
                tgt = [(k, m, PRODUCT) for m in P] + [(k, m, REAGENT) for m in G]
            else:
                kd = {}
                for m in [*R, *G, *P]:
                    kd.setdefault(m, rng.choice(S))
                xi = rng.randint(1, min(kd.values()))
                src = [(kd[m], m, REACTANT) for m in R] + [(kd[m], m, REAGENT) for m in G]
                src += [(kd[m] - xi, m, PRODUCT) for m in P if kd[m] - xi > 0]
                tgt = [(kd[m], m, PRODUCT) for m in P] + [(kd[m], m, REAGENT) for m in G]
                tgt += [(kd[m] - xi, m, REACTANT) for m in R if kd[m] - xi > 0]
            rng.shuffle(src)
            rng.shuffle(tgt)
            src_l.append(format_bag(Term(k, m) for k, m, _ in src))
            tgt_l.append(format_bag(Term(k, m) for k, m, _ in tgt))
            meta = {
                "rxn": rxn,
                "bal_split": "train" if split.startswith("train") else "valid" if split == "valid" else "test",
                "set": "out" if S is S_OUT else "in",
                "xi": xi,
                "k": kd,
                "src_roles": [r for _, _, r in src],
                "tgt_roles": [r for _, _, r in tgt],
                "nu": [[m, v] for m, v in nu.items() if v != 0],
            }
            meta_l.append(json.dumps(meta))
        s_p, t_p, m_p = split_files(Path(out), variant, split)
        atomic_write_lines(s_p, src_l)
        atomic_write_lines(t_p, tgt_l)
        atomic_write_lines(m_p, meta_l)
    return Path(out) / variant


def vocab_compositions(vocab: ExtraVocab, feat: Featurizer) -> torch.Tensor:
    """[V, comp_dim] compositions of the by-product vocabulary (``<unk>`` = zeros), for the penalty."""
    rows = [torch.zeros(feat.settings()["comp_dim"])]
    for s in vocab.items[1:]:
        rows.append(comp_vector(composition(s, feat.repr)))  # feat.molecule(s)[1] without building the graph
    return torch.stack(rows)
