"""The bond-edit product model on its own: USPTO-BAL test reactions with the gold reactants, main products at
top-1 / top-5, validity, balance with the leftover chain, and decoding throughput.

Main-product accuracy: the top-k candidate's main products (the non-leftover products) equal the gold ones as a
multiset of canonical SMILES. Validity: every molecule of the top-1 candidate re-parses with RDKit (reactions
with no candidate count as invalid). Balance: the top-1 products plus the leftover chain have exactly the
reactants' composition.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..inference.edit_decode import EditPredictor


def reaction_file(data_dir: str | Path, split: str) -> Path:
    return Path(data_dir) / "uspto_bal" / f"reactions-{split}.jsonl"


def _balanced(reactants: list[str], products: list[str]) -> tuple[bool, str | None]:
    """Whether products + leftover chain conserve every atom (and charge) of the reactants; the chain."""
    from ..chem.leftover import leftover_composition, leftover_from_composition
    from ..errors import ChemistryError

    try:
        excess = leftover_composition(products, reactants)  # atoms the products have beyond the reactants
        diff = leftover_composition(reactants, products)
        chain = leftover_from_composition(reactants, products)
    except ChemistryError:
        return False, None
    return (not excess) and (not diff or chain is not None), chain


def evaluate_edit_model(
    predictor: EditPredictor, records: Sequence[dict[str, Any]], beam: int, batch: int
) -> dict[str, Any]:
    """Score an ``EditPredictor`` on reaction records (``reactants``, ``reagents``, gold products, edits)."""
    from rdkit import Chem

    from ..chem.edits import check_record, diagnose, gold_products

    t0 = time.perf_counter()
    bags = [(r["reactants"], r.get("reagents", [])) for r in records]
    cands = predictor.predict(bags, beam=beam, batch_size=batch)
    wall = time.perf_counter() - t0
    n = max(len(records), 1)
    top1 = top5 = valid = balanced = left_ok = left_n = with_cand = n_cands = 0
    causes: Counter = Counter()
    ceiling: Counter = Counter(check_record(r)[0] or "ok" for r in records)  # gold edits re-applied
    for rec, cs in zip(records, cands, strict=True):
        gold = sorted(gold_products(rec))
        n_cands += len(cs)
        top5 += any(c.products == gold for c in cs[:5])
        if not cs:
            causes["no_valid_candidate"] += 1
            continue
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
    return {
        "n": len(records),
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
        "reactions_per_s": len(records) / max(wall, 1e-9),
    }


def _training_data_of_checkpoint(ck: Path) -> str | None:
    """For a checkpoint without a run summary next to it (a bundled one, or a run still training): from its
    saved config and the manifest of the build it was trained on. ``local`` when the build has no extra
    reactions; with extra ones, ``local+extra`` when ``data.edit_sources`` (empty = every source) takes the
    atom-mapped USPTO-full ones (USPTO-500-MT reactions carry no atom map, so they never give an edit label);
    ``None`` when the build's manifest cannot be read."""
    import json

    from ..checkpoint import load_checkpoint
    from ..training.edits import KNOWN_SOURCES, parse_sources, training_data_label

    data = (load_checkpoint(ck).get("config") or {}).get("data") or {}
    manifest = Path(data.get("dir") or "") / "manifest.json"
    if not data.get("dir") or not manifest.is_file():
        return None
    extra = json.loads(manifest.read_text()).get("extra")
    if not extra:
        return "local"
    sources = parse_sources(data.get("edit_sources") or "") or KNOWN_SOURCES
    full_kept = int(((extra.get("sources") or {}).get("uspto_full") or {}).get("kept", 0))
    return training_data_label({"local": {"used": "local" in sources},
                                "uspto_full": {"used": "uspto_full" in sources and full_kept > 0}})  # fmt: skip


def edit_benchmark(
    cfg: dict[str, Any],
    checkpoint: Path | None,
    split: str = "test",
    limit: int = 2000,
    beam: int = 5,
    batch_size: int = 32,
    train_first: bool = False,
    resume: bool = False,
) -> dict[str, Any]:
    """Train the config's edit model when its ``best.pt`` is missing (or asked to), then score the first
    ``limit`` reactions of ``split``; returns the report written to ``results/edits.json``."""
    import json

    from ..data.edit_dataset import load_records
    from ..inference.edit_decode import EditPredictor
    from ..training.run import train

    ck = checkpoint or Path(cfg.get("run_dir", "runs/edits")) / "best.pt"
    if not resume:  # a fresh run (--train, or no best.pt yet) replaces whatever run_dir holds
        cfg = {**cfg, "train": {**cfg.get("train", {}), "overwrite": True}}
    trained = train(cfg, resume=resume) if (train_first or resume or not ck.exists()) else None
    records = load_records(reaction_file(cfg["data"]["dir"], split), limit)
    metrics = evaluate_edit_model(EditPredictor.from_checkpoint(ck), records, beam, batch_size)
    summary_path = ck.parent / "summary.json"
    summary = trained or (json.loads(summary_path.read_text()) if summary_path.exists() else {})
    return {
        "task": "USPTO-BAL base reactions: main products from bond edits",
        "split": split,
        "subset": f"first {limit} records" if limit else "all records",
        "beam": beam,
        "device": "cpu",
        "checkpoint": str(ck),
        "config": cfg,
        "metrics": metrics,
        "training_data": summary.get("training_data") or _training_data_of_checkpoint(ck),
        "training": {
            k: summary.get(k) for k in ("n_train", "n_val", "best", "steps", "train_s", "n_params", "sources")
        },
    }
