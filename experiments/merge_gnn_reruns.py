"""Results curation: bring the GNN records of reruns (bench runs written to another --out) into the committed
results: the records of the chosen variants replace theirs in results/gnn.json, their error breakdowns replace their
rows of results/gnn_errors.md, and the tables and the full results table (experiments/comparison.md) are regenerated.
Only local-protocol records of model `gnn` are taken; a variant asked for but found in no file is an error.

    python experiments/merge_gnn_reruns.py runs/gnn_local/results/gnn.json results/reruns/*.json \
        --variants F_T2_x1,F_T2_x5,S_T2_x1,S_T2_x5
"""

import argparse
from pathlib import Path

from gnn_chemalgebra.benchmark.errors import replace_rows_from_records
from gnn_chemalgebra.benchmark.merge import write_outputs
from gnn_chemalgebra.benchmark.records import LOCAL, index, load_records, update_records
from gnn_chemalgebra.io import atomic_write_text

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("records", type=Path, nargs="+", help="results files of the reruns (later files win)")
ap.add_argument("--variants", required=True, help="comma-separated short names, e.g. F_T2_x1,S_T2_x5")
ap.add_argument("--out", type=Path, default=Path("results"), help="the results folder to update")
ap.add_argument("--readme", type=Path, default=Path("experiments/comparison.md"))
a = ap.parse_args()

want = [v.strip() for v in a.variants.split(",") if v.strip()]
new = [
    r
    for path in a.records
    for (model, variant, _), r in index(load_records(path), LOCAL).items()
    if model == "gnn" and variant in want
]
if missing := sorted(set(want) - {r["variant"] for r in new}):
    raise SystemExit(f"merge_gnn_reruns: no local GNN record of {', '.join(missing)} in the files given")
update_records(a.out / "gnn.json", new)
errors = a.out / "gnn_errors.md"
if errors.exists():
    atomic_write_text(errors, replace_rows_from_records(errors.read_text(encoding="utf-8"), new))
for r in sorted(new, key=lambda r: (r["variant"], r["setting"])):
    print(f"{r['variant']} {r['setting']}: EM {r['EM']:.2f} n={r['n']} ({r.get('train_steps')} steps)")
write_outputs(a.out, a.readme, print)
