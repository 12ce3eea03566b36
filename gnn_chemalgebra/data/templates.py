"""``gnnca data templates``: training reactions for the textbook classes that patents rarely write.

Each reaction template of :mod:`gnn_chemalgebra.algebra.rules.templates` (RDKit reaction SMARTS for the
undergraduate organic classes, with the reagents a chemist writes and the real by-products) is applied to the
molecules of a benchmark build's training reactions (:mod:`.template_inputs`), in an order drawn from the seed,
until its share of ``per_class`` is written (the templates of one class, e.g. the five alcohol oxidations, share
it equally). A substrate gives a reaction only when:

- its site matches and no group the conditions would also touch is present (else counted ``forbidden_group``);
- every match gives the same products (one unambiguous site; else ``ambiguous``) and they sanitise;
- the written reaction (the template's step, the variant's co-reactants and by-products) balances exactly by the
  project's algebra (else ``unbalanced``) and its Type-1 line reads its extent back (else ``extent_not_readable``);
- its main product, and any side product that carries the substrate's skeleton (the alcohol of a hydrolysed
  ester, the amine of a hydrolysed amide), is none of the products of the screen sets (USPTO-MIT valid and test,
  the benchmark's valid and test, the textbook's main products; counted per set) and the reaction was not
  written already.

``gnnca data templates BUILT --out OUT`` writes, like ``gnnca data dropped``::

    OUT/manifest.json            per template and per class: tried, forbidden, ambiguous, unbalanced, balanced,
                                 screened out per set, duplicates, written, with atom maps; every file's sha256
    OUT/reactions-train.jsonl    one balanced reaction per line: SMILES, coefficients, formulas, the atom-mapped
                                 reaction (every product atom mapped to its reactant atom) and its template
    OUT/ChemAlgebra_{S,F}_T1_x1/{src,tgt,meta}-train   Type-1 lines in the chemist's convention
    OUT/ChemAlgebra_{S,F}_T2_x1/{src,tgt,meta}-train   Type-1 and Type-2 lines interleaved

A second round (``rounds=2``) runs the templates still short of their share on the first round's main products
(a protecting group taken off again, an azide reduced). Deterministic for a seed: each template's substrate
order, and each substrate's partners, variant and solvent, depend on the seed, the template and the substrate
only (so ``--workers`` does not change a byte).
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator
from multiprocessing import Pool
from pathlib import Path
from typing import Any

from rdkit import Chem

from ..algebra.rules.template_apply import Applied, Written, apply_template, balance_reaction, reaction
from ..algebra.rules.template_parts import POOLS, Template
from ..algebra.rules.templates import TEMPLATES
from ..chem.edit_extract import labels_for_record
from ..chem.edit_labels import EditLabelError
from ..errors import InputError
from ..io import atomic_write_json, atomic_write_lines
from .chemist_lines import type1_readable
from .extra import product_key
from .uspto import formula_of

SOURCE_SET = "templates"
PER_CLASS = 1500
SOLVENT_SHARE = 0.5  # share of lines that also name a solvent, where the template lists some

Item = tuple[str, int, int, int]  # template name, reactions to write, seed, round
_STATE: dict[str, Any] = {}  # per process: the substrate pool, its molecules, the screen sets


def _init(pool: list[str], screens: dict[str, set[str]]) -> None:
    _STATE["pool"] = pool
    _STATE["mols"] = [Chem.MolFromSmiles(s) for s in pool]
    _STATE["screens"] = screens


def _record(t: Template, applied: Applied, written: Written) -> dict[str, Any]:
    species = [*written.reactants, *written.reagents, written.product, *written.byproducts]
    return {
        "id": None,
        "mit_split": None,
        "mit_index": None,
        "reactants": list(written.reactants),
        "reagents": list(written.reagents),
        "products": [written.product],
        "byproducts": list(written.byproducts),
        "coefficients": dict(written.coefficients),
        "mapped": applied.mapped,
        "source": {"set": SOURCE_SET, "template": t.name, "class": t.cls},
        "formulas": {m: formula_of(m) for m in dict.fromkeys(species)},
    }


def _screened(main: str, screens: dict[str, set[str]]) -> str | None:
    key = product_key(Chem.MolFromSmiles(main))
    return next((name for name, keys in screens.items() if key in keys), None)


def _attempt(t: Template, substrate: str, seed: int) -> tuple[Applied, Written] | str:
    """One substrate through one template: the reaction, or the reason there is none."""
    rng = random.Random(f"{seed}/templates/{t.name}/{substrate}")
    partners = [rng.choice(POOLS[p]) for p in t.partners]
    applied = apply_template(t, [substrate, *partners])
    if isinstance(applied, str):
        return applied
    var = rng.choice(t.variants)
    solvent = rng.choice(t.solvents) if t.solvents and rng.random() < SOLVENT_SHARE else None
    written = balance_reaction(applied, var, solvent)
    if written is None:
        return "unbalanced"
    reactant_coefs = [written.coefficients[m] for m in written.reactants]
    if not type1_readable(reactant_coefs, list(Counter(written.reagents).values())):
        return "extent_not_readable"
    return applied, written


def generate(item: Item) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    """The reactions of one template in one round (runs in a worker): ``(name, records, counts)``."""
    name, per_class, seed, round_ = item
    t = next(t for t in TEMPLATES if t.name == name)
    pool, mols, screens = _STATE["pool"], _STATE["mols"], _STATE["screens"]
    site = reaction(t.smarts).GetReactantTemplate(0)
    order = list(range(len(pool)))
    random.Random(f"{seed}/templates/{name}" + (f"/round{round_}" if round_ > 1 else "")).shuffle(order)
    counts: Counter = Counter()
    screened: Counter = Counter()
    seen: set[tuple[Any, ...]] = set()
    records: list[dict[str, Any]] = []
    for i in order:
        if len(records) >= per_class:
            break
        if mols[i] is None or not mols[i].HasSubstructMatch(site):
            continue
        counts["tried"] += 1
        found = _attempt(t, pool[i], seed)
        if isinstance(found, str):
            counts[found] += 1
            continue
        applied, written = found
        counts["balanced"] += 1
        counts["balanced_not_unique"] += not written.unique
        where = next(filter(None, (_screened(m, screens) for m in (written.product, *applied.substrate_sides))), None)
        if where is not None:
            screened[where] += 1
            continue
        key = (tuple(sorted(written.reactants)), written.product)
        if key in seen:
            counts["duplicates"] += 1
            continue
        seen.add(key)
        rec = _record(t, applied, written)
        rec["source"]["round"] = round_
        try:
            labels_for_record(rec)
        except EditLabelError:
            rec["mapped"] = None
        counts["mapped"] += rec["mapped"] is not None
        records.append(rec)
    counts["written"] = len(records)
    return name, records, {"class": t.cls, **dict(sorted(counts.items())), "screened_out": dict(screened)}


def quota(t: Template, per_class: int) -> int:
    """Reactions one template may write: ``per_class`` shared by the templates of its class (rounded up)."""
    n = sum(1 for u in TEMPLATES if u.cls == t.cls)
    return -(-per_class // n)


def _merged(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Counts of two rounds of one template added up (``written_round2``: the second round's share)."""
    out = dict(a)
    for k, v in b.items():
        if isinstance(v, int):
            out[k] = out.get(k, 0) + v
    out["screened_out"] = dict(Counter(a["screened_out"]) + Counter(b["screened_out"]))
    out["written_round2"] = b["written"]
    return out


def _run(
    items: list[tuple[str, int, int, int]], pool: list[str], screens: dict[str, set[str]], workers: int
) -> Iterator:
    if workers <= 1:
        _init(pool, screens)
        yield from map(generate, items)
        return
    with Pool(workers, initializer=_init, initargs=(pool, screens)) as procs:
        yield from procs.imap(generate, items)


def _by_class(per_template: dict[str, dict[str, Any]]) -> dict[str, dict[str, int]]:
    out: dict[str, Counter] = {}
    for counts in per_template.values():
        row = out.setdefault(counts["class"], Counter())
        for k, v in counts.items():
            if k == "screened_out":
                row["screened_out"] += sum(v.values())
            elif k != "class":
                row[k] += v
    return {c: dict(sorted(row.items())) for c, row in sorted(out.items())}


def build_templates(
    built: str | Path,
    out: str | Path,
    *,
    per_class: int = PER_CLASS,
    seed: int = 0,
    workers: int = 1,
    names: list[str] | None = None,
    rounds: int = 2,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Write ``out`` (see the module docstring) from the build in ``built``; return its manifest. ``names``: only
    these templates (default: all); ``rounds``: 2 applies the templates still short of their share to the main
    products of the first round (a Boc group removed from an amine the first round protected)."""
    from .dropped import _write_lines
    from .manifest import built_files, file_info
    from .template_inputs import derived_pool, read_build, screen_sets, substrate_pool

    built, out = Path(built), Path(out)
    if out.resolve() == built.resolve() or built.resolve() in out.resolve().parents:
        raise InputError("--out must be outside the build folder it reads (its files stay as built)", path=str(out))
    known = [t.name for t in TEMPLATES]
    unknown = sorted(set(names or []) - set(known))
    if unknown:
        raise InputError(f"unknown template {unknown[0]!r} (known: {', '.join(known)})")
    t0 = time.perf_counter()
    _, src_dir = read_build(built)
    pool = substrate_pool(built)
    screens = screen_sets(built, src_dir, workers=workers, log=log)
    log(f"templates: {len(pool):,} substrate molecules, {len(names or known)} templates, {per_class:,} per class")
    t_read = time.perf_counter() - t0
    items = [(t.name, quota(t, per_class), seed, 1) for t in TEMPLATES if names is None or t.name in names]
    records: list[dict[str, Any]] = []
    per_template: dict[str, dict[str, Any]] = {}
    for name, recs, counts in _run(items, pool, screens, workers):
        per_template[name] = counts
        records += recs
        log(f"templates: {name}: {counts['written']:,} written of {counts.get('tried', 0):,} tried")
    pool2: list[str] = []
    if rounds > 1:
        pool2 = derived_pool([r["products"][0] for r in records], pool)
        items = [(n, q - per_template[n]["written"], seed, 2) for n, q, _, _ in items if per_template[n]["written"] < q]
        log(f"templates: round 2: {len(pool2):,} products of round 1 as substrates, {len(items)} templates short")
        for name, recs, counts in _run(items, pool2, screens, workers):
            per_template[name] = _merged(per_template[name], counts)
            records += recs
            log(f"templates: {name}: {counts['written']:,} more written of {counts.get('tried', 0):,} tried")
    for k, rec in enumerate(records):
        rec["id"] = k
    t_gen = time.perf_counter() - t0 - t_read

    out.mkdir(parents=True, exist_ok=True)
    atomic_write_lines(out / "reactions-train.jsonl", (json.dumps(r, separators=(",", ":")) for r in records))
    lines, skipped_t2 = _write_lines(out, records, seed, False)
    totals: Counter = Counter()
    for counts in per_template.values():
        totals.update({k: v for k, v in counts.items() if isinstance(v, int)})
        totals.update({f"screened_out_{k}": v for k, v in counts["screened_out"].items()})
    manifest = {
        "tool": "gnnca data templates",
        "from": {"built": str(built), "manifest_sha256": file_info(built / "manifest.json")["sha256"]},
        "seed": seed,
        "per_class": per_class,
        "convention": "chemist",
        "rounds": rounds,
        "substrates": len(pool),
        "substrates_round2": len(pool2),
        "screen_sets": {k: len(v) for k, v in screens.items()},
        "counts": {
            "total": dict(sorted(totals.items())),
            "classes": _by_class(per_template),
            "templates": per_template,
            "lines": lines,
            "type2_not_written": skipped_t2,
        },
        "seconds": {"read": round(t_read, 1), "generate": round(t_gen, 1)},
        "files": {p.relative_to(out).as_posix(): file_info(p) for p in built_files(out)},
    }
    atomic_write_json(out / "manifest.json", manifest)
    n_screened = sum(v for k, v in totals.items() if k.startswith("screened_out_"))
    log(
        f"templates: {len(records):,} reactions written ({totals['mapped']:,} atom-mapped) from "
        f"{len(per_template)} templates; screened out: {n_screened:,}"
    )
    return manifest
