"""A tiny stand-alone copy of the benchmark's augmentation rules (benchmark page, section 3).

Written from the rules, not from the project's builder, so the algebra is checked against an
independent generator. Also writes variant folders that follow ``data/layout.py``.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

from gnn_chemalgebra.algebra.extent import S_IN, S_OUT
from gnn_chemalgebra.chem.bag import Term, format_bag

Line = dict  # src, src_roles, tgt, tgt_roles, xi, k, nu

# Small balanced formula reactions (reactants, reagents, products); some with repeated strings.
REACTIONS: list[tuple[list[str], list[str], list[str]]] = [
    (["CH4O", "C2H4O2"], ["H2O4S"], ["C3H6O2", "H2O"]),
    (["C7H6O2", "CH4O"], [], ["C8H8O2", "H2O"]),
    (["H2", "H2", "O2"], ["Pt"], ["H2O", "H2O"]),
    (["C2H4", "H2"], ["Pd", "C2H6O"], ["C2H6"]),
    (["C6H6", "Br2"], ["Br3Fe"], ["C6H5Br", "BrH"]),
    (["C4H8O", "H2"], ["C4H8O"], ["C4H10O"]),  # reactant string is also a reagent
    (["C3H6O", "C3H6O"], ["HNa"], ["C6H10O", "H2O"]),  # reactant twice
    (["C5H8", "H2O"], ["H2O"], ["C5H10O"]),
]


def nu_of(reactants: list[str], products: list[str]) -> dict[str, int]:
    c = Counter(products)
    c.subtract(Counter(reactants))
    return {m: n for m, n in c.items() if n}


def _shuffled(rng: random.Random, pairs: list[tuple[Term, str]]) -> tuple[list[Term], list[str]]:
    rng.shuffle(pairs)
    return [t for t, _ in pairs], [r for _, r in pairs]


def gen_type1(rng: random.Random, rxn, coef_set) -> Line:
    reactants, reagents, products = rxn
    k = rng.choice(list(coef_set))
    src = [(Term(k, m), "reactant") for m in reactants] + [(Term(k, m), "reagent") for m in reagents]
    tgt = [(Term(k, m), "product") for m in products] + [(Term(k, m), "reagent") for m in reagents]
    s, sr = _shuffled(rng, src)
    t, tr = _shuffled(rng, tgt)
    ks = {m: k for m in reactants + reagents + products}
    return {
        "src": s,
        "src_roles": sr,
        "tgt": t,
        "tgt_roles": tr,
        "xi": k,
        "k": ks,
        "nu": nu_of(reactants, products),
    }


def gen_type2(rng: random.Random, rxn, coef_set) -> Line:
    reactants, reagents, products = rxn
    ks: dict[str, int] = {}
    for m in reactants + reagents + products:
        if m not in ks:
            ks[m] = rng.choice(list(coef_set))
    k_hat = rng.randint(1, min(ks.values()))
    src = [(Term(ks[m], m), "reactant") for m in reactants] + [(Term(ks[m], m), "reagent") for m in reagents]
    src += [(Term(ks[m] - k_hat, m), "product") for m in products if ks[m] - k_hat > 0]
    tgt = [(Term(ks[m], m), "product") for m in products] + [(Term(ks[m], m), "reagent") for m in reagents]
    tgt += [(Term(ks[m] - k_hat, m), "reactant") for m in reactants if ks[m] - k_hat > 0]
    s, sr = _shuffled(rng, src)
    t, tr = _shuffled(rng, tgt)
    return {
        "src": s,
        "src_roles": sr,
        "tgt": t,
        "tgt_roles": tr,
        "xi": k_hat,
        "k": ks,
        "nu": nu_of(reactants, products),
    }


def write_variant(out: Path, variant: str, n_per_split: int = 12, seed: int = 0) -> None:
    """A small variant folder: every split of layout.VARIANT_SPLITS with meta records."""
    from gnn_chemalgebra.data.layout import VARIANT_SPLITS, split_files, variant_props

    rng = random.Random(seed)
    gen = gen_type1 if variant_props(variant)["type"] == 1 else gen_type2
    for split in VARIANT_SPLITS:
        src_p, tgt_p, meta_p = split_files(out, variant, split)
        src_p.parent.mkdir(parents=True, exist_ok=True)
        src_lines, tgt_lines, metas = [], [], []
        for i in range(n_per_split):
            ridx = i % len(REACTIONS)
            which = "out" if split == "test_out" or (split.endswith("cross") and i % 2) else "in"
            line = gen(rng, REACTIONS[ridx], S_IN if which == "in" else S_OUT)
            src_lines.append(format_bag(line["src"]))
            tgt_lines.append(format_bag(line["tgt"]))
            metas.append(
                {
                    "rxn": ridx,
                    "bal_split": "test",
                    "set": which,
                    "xi": line["xi"],
                    "k": line["k"],
                    "src_roles": line["src_roles"],
                    "tgt_roles": line["tgt_roles"],
                    "nu": [[m, n] for m, n in line["nu"].items()],
                }
            )
        src_p.write_text("\n".join(src_lines) + "\n")
        tgt_p.write_text("\n".join(tgt_lines) + "\n")
        meta_p.write_text("".join(json.dumps(m) + "\n" for m in metas))
