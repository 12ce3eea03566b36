"""Rates of the chemist's-convention training data: how fast ``gnnca data dropped`` closes rows and how often the
training-time rewrites change a benchmark line, and what they cost per bag.

    python experiments/chemist_data_rates.py --dropped-built BUILT_EXTRA --limit 3000 --lines built/full --n 5000

``--dropped-built``: a ``gnnca data build --extra`` folder; the first ``--limit`` rows its leftover rule dropped are
prepared and closed in this process (CPU seconds per stage, closed share by source). ``--lines``: a benchmark
folder; the first ``--n`` ChemAlgebra_S_T2_x1 and F_T2_x1 training lines are rewritten with the probabilities of
configs/gnn_chemist.yaml (share changed, by rewrite; bags per second featurised with and without the rewrites).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter
from pathlib import Path

from gnn_chemalgebra.data.augmented import AugmentSettings, augment_example
from gnn_chemalgebra.data.bag_transforms import Line, ion_pairs, split_salt, unconsumed
from gnn_chemalgebra.data.dataset import ExtraVocab, load_examples, to_data
from gnn_chemalgebra.data.dropped import close_row
from gnn_chemalgebra.data.featurize import Featurizer
from gnn_chemalgebra.data.rejected import screen_rejected


def dropped_rates(built: Path, limit: int) -> dict:
    t = time.process_time()
    screened = screen_rejected(built, workers=1, limit=limit, log=lambda *_: None)
    t_screen = time.process_time() - t
    t = time.process_time()
    results = [close_row((raw, prep, 2)) for raw, prep in screened.items]
    t_close = time.process_time() - t
    by_source: dict[str, Counter] = {}
    for (raw, _), res in zip(screened.items, results, strict=True):
        by_source.setdefault(raw.source, Counter())["closed" if res["ok"] else res["reason"]] += 1
    n = len(results)
    return {
        "rows": n,
        "closed": sum(r["ok"] for r in results),
        "cpu_s_screen_incl_mit_keys": round(t_screen, 1),
        "cpu_s_close": round(t_close, 1),
        "close_rows_per_cpu_s": round(n / t_close, 1),
        "by_source": {s: dict(c.most_common()) for s, c in by_source.items()},
    }


def rewrite_rates(folder: Path, variant: str, n: int, settings: AugmentSettings) -> dict:
    repr = "smiles" if "_S_" in variant else "formula"
    exs = load_examples(folder, variant, "train", n, roles=True)
    has = Counter()
    for ex in exs:
        probe = Line(tuple(ex.terms), ex.src_roles, tuple(ex.terms), ex.src_roles, ex.nu, ex.xi)  # source roles
        free = unconsumed(probe)
        has["unconsumed_molecule"] += bool(free)
        has["ion_pair_to_salt"] += bool(ion_pairs(probe, repr))
        has["salt_to_ions"] += repr == "smiles" and any(split_salt(m) for m in free)
    changed = sum(augment_example(ex, settings, repr, random.Random(i)) is not ex for i, ex in enumerate(exs))
    feat, vocab = Featurizer(repr), ExtraVocab.build(exs)
    for i, ex in enumerate(exs):  # warm the featuriser's molecule cache for both timings (salts included)
        to_data(ex, feat, vocab, i)
        to_data(augment_example(ex, settings, repr, random.Random(i)), feat, vocab, i)
    t = time.perf_counter()
    for i, ex in enumerate(exs):
        to_data(ex, feat, vocab, i)
    plain = len(exs) / (time.perf_counter() - t)
    t = time.perf_counter()
    for i, ex in enumerate(exs):
        to_data(augment_example(ex, settings, repr, random.Random(i)), feat, vocab, i)
    rewritten = len(exs) / (time.perf_counter() - t)
    return {"lines": len(exs), "lines_with": {k: v for k, v in has.items()}, "changed_at_config_rates": changed,
            "bags_per_s_plain": round(plain), "bags_per_s_rewritten": round(rewritten)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dropped-built", type=Path)
    ap.add_argument("--limit", type=int, default=3000)
    ap.add_argument("--lines", type=Path)
    ap.add_argument("--n", type=int, default=5000)
    args = ap.parse_args()
    out: dict = {}
    if args.dropped_built:
        out["dropped"] = dropped_rates(args.dropped_built, args.limit)
    if args.lines:
        settings = AugmentSettings(drop_reagents=0.3, salts=0.2)
        for v in ("ChemAlgebra_S_T2_x1", "ChemAlgebra_F_T2_x1"):
            out[v] = rewrite_rates(args.lines, v, args.n, settings)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
