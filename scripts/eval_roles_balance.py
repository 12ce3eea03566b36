"""Score a GNN checkpoint on a test split: EM, the share of lines whose first hypothesis balances without search,
and role accuracy per gold role; logic in gnn_chemalgebra.benchmark.roles.balance_record.

    python scripts/eval_roles_balance.py --checkpoint runs/x/best.pt --built built/full \
        --variant ChemAlgebra_F_T1_x1 --split test_in --out results/x.json
"""

import argparse
import json
from pathlib import Path

from gnn_chemalgebra.benchmark.roles import balance_record

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--checkpoint", required=True)
ap.add_argument("--built", type=Path, default=Path("built/full"))
ap.add_argument("--variant", required=True)
ap.add_argument("--split", default="test_in")
ap.add_argument("--limit", type=int, default=0, help="first N lines only (0 = all)")
ap.add_argument("--label", default="", help="free text stored with the record (e.g. the run's settings)")
ap.add_argument("--out", type=Path, help="append the record (one JSON line) to this file")
ap.add_argument("--no-role-evidence", action="store_true", help="decode.role_evidence=false (Type 2)")
a = ap.parse_args()
evidence = False if a.no_role_evidence else None
rec = balance_record(a.checkpoint, a.built, a.variant, a.split, a.limit or None, a.label, role_evidence=evidence)
print(json.dumps(rec))
if a.out:
    a.out.parent.mkdir(parents=True, exist_ok=True)
    with open(a.out, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec) + "\n")
