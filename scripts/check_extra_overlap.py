"""Audit a ``gnnca data build --extra`` folder: no extra training reaction has a USPTO-MIT valid/test product.

Usage: python scripts/check_extra_overlap.py --built built/extra [--local built/full] [--workers 2]

Recomputes the MIT valid/test product keys from data/, checks every extra record and every training sidecar
line drawn from one, and (with --local) that every valid/test file equals the local build's. Exit 1 on any problem.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gnn_chemalgebra.data.build import bundled_data_dir
from gnn_chemalgebra.data.extra_audit import audit_overlap, compare_to_local


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--built", type=Path, required=True)
    ap.add_argument("--local", type=Path, help="a default (local protocol) build to compare valid/test files with")
    ap.add_argument("--data", type=Path, default=bundled_data_dir())
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args()
    report = {"overlap": audit_overlap(args.built, args.data, args.workers)}
    if args.local:
        report["valid_test_vs_local"] = compare_to_local(args.built, args.local)
    problems = [p for part in report.values() for p in part["problems"]]
    for p in problems[:20]:
        print(p)
    o = report["overlap"]
    print(
        f"extra records {o['extra_records']} {o['extra_records_by_source']}, sidecar lines {o['sidecar']}, "
        f"MIT valid/test product keys {o['mit_product_keys']}: {len(problems)} problem(s)"
    )
    print("JSON " + json.dumps({k: {**v, "problems": len(v["problems"])} for k, v in report.items()}))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
