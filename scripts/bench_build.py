"""Builder throughput: the parallel builder vs a plain single-process loop doing the same work, in one run.

Usage: python scripts/bench_build.py [--n 4000] [--repeats 3] [--workers 2] [--full-memory]

Prints reactions/s (median of the repeats) for both, their ratio, and the peak resident memory of a
complete ``gnnca data build`` in a child process (with --full-memory; takes a few minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gnn_chemalgebra.data.build import _process_all, bundled_data_dir
from gnn_chemalgebra.data.uspto import process_reaction, read_split


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=4000, help="reactions of MIT valid to process per timing")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--full-memory", action="store_true", help="also build everything and report peak RSS")
    args = ap.parse_args()

    raws = read_split(bundled_data_dir(), "valid", args.n)
    loop_t, pool_t = [], []
    for _ in range(args.repeats):  # interleaved so both see the same machine load
        t = time.perf_counter()
        plain = [process_reaction(r) for r in raws]
        loop_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        par = _process_all(raws, args.workers, "bench")
        pool_t.append(time.perf_counter() - t)
        assert plain == par, "parallel builder must give the same records as the plain loop"
    loop_rate = len(raws) / statistics.median(loop_t)
    pool_rate = len(raws) / statistics.median(pool_t)
    result = {
        "reactions": len(raws),
        "repeats": args.repeats,
        "workers": args.workers,
        "cores": os.cpu_count(),
        "plain_loop_rxn_per_s": round(loop_rate, 1),
        "builder_rxn_per_s": round(pool_rate, 1),
        "speedup": round(pool_rate / loop_rate, 2),
    }
    if args.full_memory:
        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            cmd = [
                sys.executable,
                "-m",
                "gnn_chemalgebra.cli",
                "data",
                "build",
                "--out",
                str(Path(tmp) / "b"),
            ]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            result["full_build_s"] = round(time.perf_counter() - t, 1)
        # ru_maxrss of children is the largest single child (the build's main process or one worker), in KiB
        result["full_build_peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)
    print("| reactions | workers | plain loop (rxn/s) | builder (rxn/s) | speed-up |")
    print("|---|---|---|---|---|")
    print(
        f"| {result['reactions']} | {result['workers']} | {result['plain_loop_rxn_per_s']} | "
        f"{result['builder_rxn_per_s']} | {result['speedup']}x |"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
