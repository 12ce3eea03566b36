"""Bond-edit product predictor on USPTO-BAL test: top-1/top-5 main-product accuracy, validity, throughput.

Usage::

    python scripts/edit_benchmark.py [--config configs/edits_cpu.yaml] [--train] [--limit 2000] [--beam 5]

Trains with the config when its ``run_dir/best.pt`` is missing (or with ``--train``), then decodes the first
``--limit`` test reactions (0 = all) on CPU with one thread and writes ``results/edits.json``.

Main-product accuracy: the top-k candidate's main products (the non-leftover products) equal the gold ones as
a multiset of canonical SMILES. Validity: every molecule of the top-1 candidate re-parses with RDKit (reactions
with no candidate count as invalid). Balance: the top-1 products plus the leftover chain from
:func:`~gnn_chemalgebra.chem.edits.leftover_from_composition` have exactly the reactants' composition.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import torch
from rdkit import Chem, RDLogger

from gnn_chemalgebra.chem.edits import (
    EditLabelError,
    check_record,
    diagnose,
    gold_products,
    leftover_composition,
    leftover_from_composition,
)
from gnn_chemalgebra.config import load_config
from gnn_chemalgebra.data.edit_dataset import load_records
from gnn_chemalgebra.inference.edit_decode import EditPredictor
from gnn_chemalgebra.training.edits import reaction_path, train_edits


def _balanced(reactants: list[str], products: list[str]) -> tuple[bool, str | None]:
    """Whether products + leftover chain conserve every atom (and charge) of the reactants; the chain."""
    try:
        excess = leftover_composition(products, reactants)  # atoms the products have beyond the reactants
        diff = leftover_composition(reactants, products)
        chain = leftover_from_composition(reactants, products)
    except EditLabelError:
        return False, None
    return (not excess) and (not diff or chain is not None), chain


def evaluate(pred: EditPredictor, records: list[dict[str, Any]], beam: int, batch_size: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    cands = pred.predict([(r["reactants"], r.get("reagents", [])) for r in records], beam=beam, batch_size=batch_size)
    wall = time.perf_counter() - t0
    n = len(records)
    top1 = top5 = valid = balanced = left_ok = left_n = with_cand = 0
    causes: Counter = Counter()
    ceiling: Counter = Counter(check_record(r)[0] or "ok" for r in records)  # gold edits re-applied
    n_cands = 0
    for rec, cs in zip(records, cands, strict=True):
        gold = sorted(gold_products(rec))
        n_cands += len(cs)
        if cs:
            with_cand += 1
            best = cs[0].products
            valid += all(Chem.MolFromSmiles(s) is not None for s in best)
            ok, chain = _balanced(rec["reactants"], best)
            balanced += ok
            if best == gold:
                top1 += 1
                left_n += 1
                left_ok += chain == rec.get("leftover_product")
            else:
                causes[diagnose(best, gold)] += 1
        else:
            causes["no_valid_candidate"] += 1
        top5 += any(c.products == gold for c in cs[:5])
    return {
        "n": n,
        "top1": top1 / n,
        "top5": top5 / n,
        "valid_top1": valid / n,
        "balanced_top1": balanced / n,
        "with_candidate": with_cand / n,
        "mean_candidates": n_cands / n,
        "leftover_rule_on_correct_top1": left_ok / max(left_n, 1),
        "top1_failure_causes": dict(causes.most_common()),
        "gold_edit_ceiling": ceiling["ok"] / n,
        "gold_edit_failures": {k: v for k, v in ceiling.items() if k != "ok"},
        "wall_s": wall,
        "reactions_per_s": n / wall,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="configs/edits_cpu.yaml")
    ap.add_argument("--set", action="append", default=[], dest="overrides")
    ap.add_argument("--train", action="store_true", help="train even if run_dir/best.pt exists")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--checkpoint", default=None, help="default: <run_dir>/best.pt")
    ap.add_argument("--split", default="test")
    ap.add_argument("--limit", type=int, default=2000, help="first N reactions of the split (0 = all)")
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default="results/edits.json")
    args = ap.parse_args()
    RDLogger.DisableLog("rdApp.*")
    torch.set_num_threads(args.threads)
    cfg = load_config(args.config, args.overrides)
    ck = Path(args.checkpoint or Path(cfg.get("run_dir", "runs/edits")) / "best.pt")
    trained = None
    if args.train or args.resume or not ck.exists():
        trained = train_edits(cfg, resume=args.resume)
    pred = EditPredictor.from_checkpoint(ck)
    records = load_records(reaction_path(cfg["data"]["dir"], args.split), args.limit)
    res = evaluate(pred, records, args.beam, args.batch_size)
    summary_path = ck.parent / "summary.json"
    train_summary = trained or (json.loads(summary_path.read_text()) if summary_path.exists() else {})
    out = {
        "task": "USPTO-BAL base reactions: main products from bond edits (issue 4)",
        "split": args.split,
        "subset": f"first {args.limit} records" if args.limit else "all records",
        "beam": args.beam,
        "device": "cpu",
        "threads": args.threads,
        "checkpoint": str(ck),
        "config": cfg,
        "metrics": res,
        "training": {k: train_summary.get(k) for k in ("n_train", "n_val", "best", "steps", "train_s", "n_params")},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    keys = ("n", "top1", "top5", "valid_top1", "balanced_top1", "reactions_per_s")
    print(json.dumps({k: res[k] for k in keys}))


if __name__ == "__main__":
    main()
