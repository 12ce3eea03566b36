"""Results curation: turn ``scripts/eval_bundled.sh`` scores (its eval-<variant>_<setting>_<n>[_lt2].json files) into
benchmark records of the mixed Type-1 + Type-2 models trained on the extra build's x1 lines (the bundled ones:
``train``; with ``--cross-model CK``: a model of the same recipe trained on ``train_cross``), so they sit in
results/benchmark.json beside the per-variant runs under their own training-data label.

    LT=2 PARTS=F FULL=1 FVARIANTS="F_T1_x1 F_T1_x5 F_T2_x1 F_T2_x5" SETTINGS="test_in test_out" \
        scripts/eval_bundled.sh built/extra OUT
    python experiments/bundled_records.py OUT --out results/gnn.json
    python -c "from pathlib import Path; from gnn_chemalgebra.benchmark.merge import write_outputs; \
        write_outputs(Path('results'), Path('README.md'), print)"

Without --cross-model, Type-2 test_cross is skipped: the bundled models were trained on `train`, not on
`train_cross` (the cross protocol). Type-1 test_cross is kept, by the rule of the local rows: the network never
reads a coefficient magnitude, so a Type-1 line of `train` and of `train_cross` is the same input, and the
standard model is the cross model.
"""

import argparse
import json
import re
from pathlib import Path

from gnn_chemalgebra.benchmark.records import METRICS, update_records

LABEL = "local+extra (mixed T1+T2 x1 lines)"
TAG = re.compile(r"eval-(?P<v>[FS]_T[12]_x[15])_(?P<s>test_in|test_out|test_cross)_(?P<n>\d+)(?P<lt>_lt\d)?\.json$")

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("evals", type=Path, help="the OUT folder of scripts/eval_bundled.sh")
ap.add_argument("--out", type=Path, default=Path("results/gnn.json"), help="results file to merge into")
ap.add_argument("--label", default=LABEL, help="training_data of the records")
ap.add_argument("--command", default="scripts/eval_bundled.sh (see this script's docstring)")
ap.add_argument("--cross-model", help="the checkpoint the test_cross files were scored with (trained on train_cross)")
ap.add_argument("--checkpoint", help="the checkpoint the files were scored with (default: the bundled one)")
a = ap.parse_args()

records = []
for path in sorted(a.evals.glob("eval-*.json")):
    m = TAG.search(path.name)
    if m is None:
        continue
    v, s, typ = m["v"], m["s"], m["v"][3]
    if a.cross_model and s != "test_cross":
        continue
    if s == "test_cross" and typ == "2" and not a.cross_model:  # Type 2 needs a train_cross model (cross protocol)
        continue
    if typ == "2" and not m["lt"]:  # Type-2 files read as Type 2 (LT=2: --line-type 2); LT leaves Type-1 files alone
        continue
    if m["n"] not in ("0", "2000"):  # the quick first-500 / first-200 check lines, not the results table's
        continue
    ev = json.loads(path.read_text())
    rec = {"model": "gnn", "variant": v, "setting": s, **{k: ev[k] for k in METRICS}, "n": ev["n"]}
    rec.update(
        training_data=a.label,
        checkpoint=a.cross_model
        or a.checkpoint
        or "gnn_chemalgebra/checkpoints/" + ("gnn_default.pt" if v[0] == "F" else "gnn_smiles_default.pt"),
        line_type="2" if typ == "2" else "auto",
        command=a.command,
    )
    records.append(rec)
update_records(a.out, records)
for r in records:
    print(r["variant"], r["setting"], r["n"], round(r["EM"], 2))
print(f"{len(records)} records merged into {a.out} ({a.label})")
