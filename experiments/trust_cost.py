"""What the trust fields cost per line: :meth:`Trust.annotate_many` on kept prediction records, with and without
the in-domain search (``gnnca predict`` does the search for ``--json`` only), molecule caches warm as after a
prediction.

    python experiments/trust_cost.py runs/calibration_records/gnn_default-F_T1_x1-test_in-lt1-b1-n3000.jsonl \
        gnn_chemalgebra/checkpoints/gnn_default.pt
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records", type=Path, help="JSON lines of gnnca predict --json (or bench calibration --records)")
    ap.add_argument("checkpoint", type=Path, help="the checkpoint whose sidecars annotate them")
    args = ap.parse_args(argv)
    from gnn_chemalgebra.chem.molecule import composition
    from gnn_chemalgebra.trust.annotate import Trust

    trust = Trust.load_for(args.checkpoint)
    if trust is None:
        print(f"no calibration beside {args.checkpoint}", file=sys.stderr)
        return 2
    records = [json.loads(x) for x in args.records.read_text().splitlines()]
    for r in records:  # the predictor has parsed every molecule already
        for m in r["molecules"]:
            composition(m["mol"], trust.repr)
    for domain in (False, True):
        t0 = time.perf_counter()
        trust.annotate_many(records, domain=domain)
        ms = (time.perf_counter() - t0) / len(records) * 1000
        print(f"{len(records)} lines, in-domain search {'on' if domain else 'off'}: {ms:.2f} ms per line")
    return 0


if __name__ == "__main__":
    sys.exit(main())
