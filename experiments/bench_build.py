"""Builder throughput: the current builder against the plain single-process loop it replaced, on the same reactions.
Measured (4,000 MIT-valid reactions, 2 workers, medians of 3, idle machine; inside ``experiments/throughput.py
--build-n 4000``, ``results/throughput-speed-work.json``): plain loop 536 reactions/s, builder 1,882, a 3.51x speed-up,
with identical records. On a loaded machine the speed-up falls to 1.9-2.0x, the single-process gain of the caches:
the kernel schedules the processes of one terminal as one group (autogroup), so a second worker adds nothing there.

Usage: python experiments/bench_build.py [--n 4000] [--repeats 3] [--workers 2] [--full-memory]

The plain loop runs ``process_reaction`` as it was before the builder was optimised (commit ``REFERENCE``,
read with ``git show``): no caches, one process. The builder runs the current code with its worker pool, cold
caches each repeat. Also timed: the current code in one process (what the caches alone give). Timings are
interleaved, median of the repeats; the three must return the same records. ``--full-memory`` also builds
everything in a child process and reports its time and peak RSS (a few minutes).

Besides wall-clock rates, each path's CPU seconds (user + system, this process and its reaped workers) are
reported: on a shared machine the kernel's autogroup scheduling gives one terminal's processes the same share
of the CPUs however many of them run, so there the wall-clock speed-up falls to the CPU-time ratio, and
the pool's gain shows only when cores are free.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gnn_chemalgebra.data import uspto
from gnn_chemalgebra.data.build import _process_all, bundled_data_dir

REFERENCE = "6689ff0"  # the single-process builder before the caches and the worker pool
REPO = Path(__file__).resolve().parents[1]


def reference_process_reaction():
    """``process_reaction`` of the reference commit, loaded beside the current package."""
    cmd = ["git", "show", f"{REFERENCE}:gnn_chemalgebra/data/uspto.py"]
    src = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=True).stdout
    spec = importlib.util.spec_from_loader("gnn_chemalgebra.data._uspto_reference", loader=None)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = "gnn_chemalgebra.data"
    sys.modules[spec.name] = mod  # dataclasses look their module up
    exec(compile(src, f"uspto.py@{REFERENCE}", "exec"), mod.__dict__)
    return mod.process_reaction


def _cpu_s() -> float:
    """User + system seconds of this process and of its children that have been waited for."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _timed(fn) -> tuple[float, float, list]:
    uspto.clear_caches()
    c, t = _cpu_s(), time.perf_counter()
    out = fn()
    return time.perf_counter() - t, _cpu_s() - c, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=4000, help="reactions of MIT valid to process per timing")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--full-memory", action="store_true", help="also build everything and report peak RSS")
    args = ap.parse_args()

    raws = uspto.read_split(bundled_data_dir(), "valid", args.n)
    reference = reference_process_reaction()
    paths = {
        "plain": lambda: [reference(r) for r in raws],
        "cached": lambda: [uspto.process_reaction(r) for r in raws],
        "builder": lambda: _process_all(raws, args.workers, "bench"),
    }
    times: dict[str, list[float]] = {k: [] for k in paths}
    cpu: dict[str, list[float]] = {k: [] for k in paths}
    for _ in range(args.repeats):  # interleaved so all three see the same machine load
        outs = []
        for name, fn in paths.items():
            t, c, out = _timed(fn)
            times[name].append(t)
            cpu[name].append(c)
            outs.append(out)
        assert outs[0] == outs[1] == outs[2], "every path must give the same records"
    rate = {k: len(raws) / statistics.median(v) for k, v in times.items()}
    cpu_s = {k: statistics.median(v) for k, v in cpu.items()}
    result = {
        "reactions": len(raws),
        "repeats": args.repeats,
        "workers": args.workers,
        "cores": os.cpu_count(),
        "reference": REFERENCE,
        "plain_loop_rxn_per_s": round(rate["plain"], 1),
        "cached_one_process_rxn_per_s": round(rate["cached"], 1),
        "builder_rxn_per_s": round(rate["builder"], 1),
        "speedup": round(rate["builder"] / rate["plain"], 2),
        "cpu_s": {k: round(v, 2) for k, v in cpu_s.items()},
        "cpu_speedup": round(cpu_s["plain"] / cpu_s["builder"], 2),
        "cached_cpu_speedup": round(cpu_s["plain"] / cpu_s["cached"], 2),
    }
    if args.full_memory:
        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            cmd = [sys.executable, "-m", "gnn_chemalgebra.cli", "data", "build", "--out", str(Path(tmp) / "b")]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            result["full_build_s"] = round(time.perf_counter() - t, 1)
        # ru_maxrss of children is the largest single child (the build's main process or one worker), in KiB
        result["full_build_peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)
    print(
        "| reactions | workers | plain loop @ reference (rxn/s) | current, 1 process | builder (rxn/s) | speed-up "
        "| CPU s plain / 1 process / builder | CPU-time speed-up (1 process, builder) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    r, c = result, result["cpu_s"]
    print(
        f"| {r['reactions']} | {r['workers']} | {r['plain_loop_rxn_per_s']} | {r['cached_one_process_rxn_per_s']} | "
        f"{r['builder_rxn_per_s']} | {r['speedup']}x | {c['plain']} / {c['cached']} / {c['builder']} | "
        f"{r['cached_cpu_speedup']}x, {r['cpu_speedup']}x |"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
