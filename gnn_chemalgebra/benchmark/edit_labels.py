"""Gold bond-edit labels and the leftover-chain rule, measured on a built dataset (single process).

For every base reaction in ``<data>/uspto_bal/reactions-<split>.jsonl``: derive the edit labels from the
atom-mapped SMILES, apply them to the canonical reactants, and compare the product components with the gold
non-leftover products (multisets of canonical SMILES). Then guess the product-side leftover chain from the
unordered reactants with three rules. ``gnnca bench edit-labels`` prints the markdown report and one JSON line.
"""

from __future__ import annotations

import itertools
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ..chem.edits import check_record, gold_products
from ..chem.leftover import (
    leftover_composition,
    leftover_fixed_order,
    leftover_from_composition,
    leftover_molecule,
    leftover_sorted_reactants,
)

RULES = {
    "A_sorted_reactants": leftover_sorted_reactants,
    "B_fixed_hill_order": leftover_fixed_order,
    "C_first_valid_reactant_order": leftover_from_composition,
}


def _order_sensitive(reactants: list[str], products: list[str]) -> bool:
    """Whether different label orders give different valid chains (three or more distinct labels can)."""
    diff = leftover_composition(reactants, products)
    outs = set()
    for perm in itertools.islice(itertools.permutations(list(diff)), 720):
        outs.add(leftover_molecule(Counter({k: diff[k] for k in perm})))
    outs.discard(None)
    return len(outs) > 1


def _rexgen_pairs(edits: str) -> set[frozenset[int]]:
    out = set()
    for item in edits.split(";"):
        parts = item.split("-")
        if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
            out.add(frozenset((int(parts[0]), int(parts[1]))))
    return out


def label_report(path: Path, limit: int | None, source: str = "all", leftover: bool = True) -> dict[str, Any]:
    causes: Counter = Counter()
    n_changed: Counter = Counter()
    stats: Counter = Counter()
    rules: Counter = Counter()
    rules_sensitive: Counter = Counter()
    examples: dict[str, list[int]] = {}
    t0 = time.perf_counter()
    with open(path, encoding="utf-8") as fh:
        for k, line in enumerate(fh):
            if limit is not None and k >= limit:
                break
            rec = json.loads(line)
            if source != "all" and (rec.get("source") or {}).get("set", "uspto_mit") != source:
                continue
            stats["reactions"] += 1
            cause, labels = check_record(rec)
            causes[cause or "ok"] += 1
            if cause:
                examples.setdefault(cause, []).append(rec["id"])
            if labels is not None:
                n_changed[min(len(labels.bonds), 6)] += 1
                in_product = set(labels.product_atoms)
                stats["h_change_on_product_atoms"] += bool(in_product & labels.h_delta.keys())
                stats["h_capping_of_leaving_atoms"] += bool(labels.h_delta.keys() - in_product)
                stats["charge_change"] += bool(labels.charge_delta)
                stats["with_stereo_label"] += bool(labels.chiral or labels.bond_stereo)
                ours = {frozenset((labels.maps[i], labels.maps[j])) for i, j, _ in labels.bonds}
                stats["same_pairs_as_rexgen"] += ours == _rexgen_pairs(rec.get("edits") or "")
                mapped_frags = rec["mapped"].split(">")[-1].count(".") + 1
                stats["mapped_product_has_extra_fragments"] += mapped_frags > len(gold_products(rec))
            gold = rec.get("leftover_product")
            if gold is None or not leftover:
                continue
            products = gold_products(rec)
            sensitive = _order_sensitive(rec["reactants"], products)
            rules["n"] += 1
            rules_sensitive["n"] += sensitive
            for name, rule in RULES.items():
                hit = rule(rec["reactants"], products) == gold
                rules[name] += hit
                rules_sensitive[name] += hit and sensitive
    seconds = time.perf_counter() - t0
    return {
        "file": str(path),
        "reactions": stats["reactions"],
        "reproduced": causes["ok"],
        "reproduced_pct": round(100 * causes["ok"] / max(stats["reactions"], 1), 3),
        "failure_causes": {c: n for c, n in causes.most_common() if c != "ok"},
        "failure_examples": {c: ids[:5] for c, ids in examples.items()},
        "changed_bonds_per_reaction": {("6+" if b == 6 else str(b)): n for b, n in sorted(n_changed.items())},
        "stats": {k: v for k, v in stats.items() if k != "reactions"},
        "leftover": {
            "with_product_leftover": rules["n"],
            "order_sensitive": rules_sensitive["n"],
            "rules": {
                name: {
                    "hits": rules[name],
                    "pct": round(100 * rules[name] / max(rules["n"], 1), 3),
                    "hits_order_sensitive": rules_sensitive[name],
                }
                for name in RULES
            },
        },
        "seconds": round(seconds, 1),
    }


def label_markdown(r: dict[str, Any], split: str) -> str:
    n = r["reactions"]
    lines = [
        f"## Gold edit labels: {split} ({n} base reactions, {r['seconds']} s)",
        "",
        "| measure | count | % |",
        "|---|---|---|",
        f"| reproduced exactly | {r['reproduced']} | {r['reproduced_pct']:.2f} |",
    ]
    for cause, c in r["failure_causes"].items():
        lines.append(f"| failure: {cause} | {c} | {100 * c / max(n, 1):.3f} |")
    if not r["failure_causes"]:
        lines.append("| failures (any cause) | 0 | 0.000 |")
    for key, c in r["stats"].items():
        lines.append(f"| {key.replace('_', ' ')} | {c} | {100 * c / max(n, 1):.2f} |")
    for b, c in r["changed_bonds_per_reaction"].items():
        lines.append(f"| changed bonds = {b} | {c} | {100 * c / max(n, 1):.2f} |")
    lo = r["leftover"]
    m, s = lo["with_product_leftover"], lo["order_sensitive"]
    lines += [
        "",
        f"## Leftover chain rules ({m} reactions with a product-side leftover; {s} order-sensitive)",
        "",
        "| rule | reproduced | % | order-sensitive reproduced |",
        "|---|---|---|---|",
    ]
    for name, v in lo["rules"].items():
        lines.append(f"| {name} | {v['hits']} | {v['pct']:.2f} | {v['hits_order_sensitive']} / {s} |")
    return "\n".join(lines)
