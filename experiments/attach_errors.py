"""Results curation: attach the error breakdowns of ``scripts/error_breakdown.py --out FILE`` to the matching GNN
records of a results file (same variant, setting, line count, checkpoint file name and training data), so the
breakdown of models scored outside the bench (the bundled ones, the ensembles) sits in results/benchmark.json and
results/gnn_errors_records.md. A breakdown whose EM differs from the record's (another decoder, other lines) is
refused and counted, not attached.

    python experiments/attach_errors.py results/bundled/errors_cells.jsonl \
        --label "local+extra (mixed T1+T2 x1 lines)" --out results/gnn.json
"""

import argparse
import json
from pathlib import Path

from gnn_chemalgebra.benchmark.errors import record_errors
from gnn_chemalgebra.benchmark.records import load_records, save_records
from gnn_chemalgebra.data.layout import variant_short

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("errors", type=Path, help="JSON lines of scripts/error_breakdown.py --out")
ap.add_argument("--out", type=Path, default=Path("results/gnn.json"), help="results file whose records get them")
ap.add_argument("--label", required=True, help="training_data of the records to update")
a = ap.parse_args()

records = load_records(a.out)
by_key = {
    (r["variant"], r["setting"], int(r["n"]), Path(str(r.get("checkpoint", ""))).name): i
    for i, r in enumerate(records)
    if r["model"] == "gnn" and r.get("training_data") == a.label
}
attached = refused = unmatched = 0
for line in a.errors.read_text(encoding="utf-8").splitlines():
    e = json.loads(line)
    key = (variant_short(e["variant"]), e["split"], int(e["n"]), Path(e["checkpoint"]).name)
    i = by_key.get(key)
    if i is None:
        unmatched += 1
        continue
    rec = records[i]
    if abs(float(rec["EM"]) - float(e["EM"])) > 0.005:
        print(f"refused {key}: breakdown EM {e['EM']} vs record EM {rec['EM']}")
        refused += 1
        continue
    records[i] = {**rec, "errors": record_errors(e["errors"])}  # a later line of the same cell wins
    attached += 1
save_records(a.out, records)
print(f"{attached} breakdowns attached, {refused} refused (EM differs), {unmatched} without a record ({a.out})")
