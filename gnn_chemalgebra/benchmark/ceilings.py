"""Oracle (Type 1) and exact Bayes (Type 2) ceilings of the lines a model was scored on.

A row scored on the first n lines of a test set (SMILES rows, the naive ablation, the Transformer) is compared
with the ceiling of those same n lines, cached in the ceiling record as ``EM_first_n``. Beside them, the
benchmark page's approximation of the Type-2 ceiling (product strings shared with a reactant or reagent treated
as uninformative), to show where its lower figure comes from.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from fractions import Fraction
from pathlib import Path

from ..data.layout import TEST_SETTINGS, split_files, variant_props
from ..errors import BalanceError
from ..evaluation.ceiling import ceiling_setting, oracle_line, read_split
from .records import CEILING_MODELS, Record

COMMAND = "gnn_chemalgebra.evaluation.ceiling.ceiling_setting (no recovery check)"


def ceiling_records(built: Path, variant: str, settings: Sequence[str] = TEST_SETTINGS) -> list[Record]:
    """One ceiling record per test setting of the variant that exists in the built folder."""
    out = []
    for setting in settings:
        if not split_files(built, variant, setting)[0].exists():
            continue
        rec = asdict(ceiling_setting(built, variant, setting))
        rec["command"] = COMMAND
        out.append(rec)
    return out


def prefix_ceiling(built: Path, variant: str, setting: str, n: int) -> float:
    """Expected oracle / Bayes EM over the first ``n`` lines of a test setting (%, 4 decimals)."""
    lines = read_split(built, variant, setting)[:n]
    type_ = int(variant_props(variant)["type"])  # type: ignore[arg-type]
    total = 0.0
    for line in lines:
        try:
            total += float(oracle_line(line, type_)[1])
        except BalanceError:
            pass
    return round(100.0 * total / max(len(lines), 1), 4)


def add_prefix_ceilings(
    records: Iterable[Record], built: Path, scored: Sequence[str] = ("gnn", "gnn_naive")
) -> list[Record]:
    """Give each ceiling record the ceiling of every shorter prefix a row of ``scored`` models was scored on in
    its cell (computed once: a cached value stays); returns the ceiling records that changed."""
    records = list(records)
    changed = []
    for c in records:
        if c["model"] not in CEILING_MODELS:
            continue
        ns = {
            r.get("n")
            for r in records
            if r["model"] in scored and (r["variant"], r["setting"]) == (c["variant"], c["setting"])
        }
        todo = sorted(n for n in ns if isinstance(n, int) and n < c["n"] and str(n) not in c.get("EM_first_n", {}))
        for n in todo:
            c.setdefault("EM_first_n", {})[str(n)] = prefix_ceiling(
                built, "ChemAlgebra_" + c["variant"], c["setting"], n
            )
        if todo:
            changed.append(c)
    return changed


def ceiling_for(c: Record | None, n: int | None) -> float | None:
    """The ceiling matching a scored row's line count: the full set's, or that of the prefix it was scored on
    (``None`` when that prefix's ceiling was never computed)."""
    if c is None:
        return None
    if n is not None and n != c.get("n"):
        value = (c.get("EM_first_n") or {}).get(str(n))
        return None if value is None else float(value)
    return float(c["EM"])


def ceiling_record(idx: dict[tuple[str, str, str], Record], variant: str, setting: str) -> Record | None:
    """The cell's oracle (Type 1) or Bayes-ceiling (Type 2) record in an index by (model, variant, setting)."""
    return idx.get(("oracle", variant, setting)) or idx.get(("bayes_ceiling", variant, setting))


def approx_ceiling_without_shared_strings(
    recs: Sequence[Record], coef_set: Sequence[int], rule: str, rng: random.Random
) -> float:
    """Type-2 Bayes ceiling (%) over USPTO-BAL base reactions from one seeded draw each, ignoring that equal
    strings share k: a product string that is also a reactant or reagent is treated as uninformative. Rule
    ``all``: k_hat is drawn up to the minimum k over all molecules (the builder's rule); ``RP``: over reactants
    and products only."""
    total = 0.0
    for r in recs:
        reactants, reagents, products = r["reactants"], r["reagents"], r["products"]
        mols = list(dict.fromkeys(reactants + reagents + products))
        k = {m: rng.choice(coef_set) for m in mols}
        pool = mols if rule == "all" else list(dict.fromkeys(reactants + products))
        k_hat = rng.randint(1, min(k[m] for m in pool))
        post: dict[int, Fraction] = {}
        for cand in range(1, max(coef_set) + 1):
            implied = {m: k[m] for m in reactants + reagents}
            ok = True
            for p in products:
                if p in implied:  # shared with a reactant/reagent: treated as uninformative
                    continue
                implied[p] = k[p] - k_hat + cand if k[p] - k_hat > 0 else cand
                ok = ok and implied[p] in coef_set
            if ok and all(implied[m] >= cand for m in pool):
                post[cand] = Fraction(1, min(implied[m] for m in pool))
        total += float(max(post.values()) / sum(post.values()))
    return 100 * total / len(recs)
