"""Throughput of the bag GNN on CPU: training reactions/s and ``gnnca predict`` reactions/s, with peak memory.

Each measurement runs in its own process (``gnnca train`` / ``gnnca predict``), so its peak resident memory is
that process's own (``os.wait4`` rusage, ru_maxrss). Reported numbers are medians over ``--repeats`` runs.
Training reactions/s is the trainer's own count over its optimisation steps (featurisation excluded; it is
reported separately). Prediction reactions/s is end to end (process start, checkpoint load, parsing,
featurisation, network, exact decoding, printing) on a ``--n``-line file, plus the steady-state rate with
start-up subtracted (a 1-line run measures start-up). Every predicted line is checked to balance against its
input (element counts and net charge, coefficient-weighted).

Example::

    python scripts/bench_gnn.py --built built/full --variant ChemAlgebra_F_T1_x1 \
        --checkpoint gnn_chemalgebra/checkpoints/gnn_default.pt
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from gnn_chemalgebra.chem.bag import parse_bag
from gnn_chemalgebra.chem.molecule import bag_composition, composition, detect_repr
from gnn_chemalgebra.data.layout import split_files
from gnn_chemalgebra.io import read_lines

GNNCA = [sys.executable, "-m", "gnn_chemalgebra.cli"]


def run_measured(cmd: list[str], stdout_path: Path | None = None) -> tuple[float, float, int, str]:
    """(wall seconds, peak RSS MiB, exit code, stderr) of one child process."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    out = open(stdout_path, "w") if stdout_path else subprocess.DEVNULL
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, env=env, text=True)
    err = p.stderr.read() if p.stderr else ""
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if stdout_path:
        out.close()  # type: ignore[union-attr]
    return wall, ru.ru_maxrss / 1024.0, os.waitstatus_to_exitcode(status), err


def totals(line: str, repr: str) -> Counter:
    return bag_composition(line, repr)  # type: ignore[arg-type]


def all_parse(line: str, repr: str) -> bool:
    """Every molecule of the line is chemically valid: RDKit parses and sanitises it (SMILES), or it parses as
    a formula."""
    from gnn_chemalgebra.errors import ChemAlgebraError

    try:
        for t in parse_bag(line, default_coef=1):
            composition(t.mol, repr)  # type: ignore[arg-type]
    except ChemAlgebraError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--built", default="built/full")
    ap.add_argument("--variant", default="ChemAlgebra_F_T1_x1")
    ap.add_argument("--checkpoint", default="gnn_chemalgebra/checkpoints/gnn_default.pt")
    ap.add_argument("--config", default="configs/gnn_bench.yaml")
    ap.add_argument("--n", type=int, default=1000, help="lines in the prediction file")
    ap.add_argument("--train-lines", type=int, default=3000)
    ap.add_argument("--train-steps", type=int, default=120)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", default="", help="also write the report here")
    args = ap.parse_args(argv)

    src = read_lines(split_files(Path(args.built), args.variant, "test_in")[0])[: args.n]
    repr_ = detect_repr([t.mol for t in parse_bag(src[0])])
    report: dict[str, object] = {"variant": args.variant, "checkpoint": args.checkpoint, "cpu_threads": 1}
    with tempfile.TemporaryDirectory() as tmp:
        tmpd = Path(tmp)
        inp, one = tmpd / "in.txt", tmpd / "one.txt"
        inp.write_text("\n".join(src) + "\n")
        one.write_text(src[0] + "\n")
        # ---------------------------------------------------------------- prediction
        walls, mems, starts = [], [], []
        balanced = valid = n_out = 0
        for r in range(args.repeats):
            w1, _, rc1, e1 = run_measured([*GNNCA, "predict", str(one), "--checkpoint", args.checkpoint])
            out = tmpd / f"pred{r}.txt"
            w, m, rc, err = run_measured([*GNNCA, "predict", str(inp), "--checkpoint", args.checkpoint], out)
            if rc or rc1:
                print(err or e1, file=sys.stderr)
                return 1
            walls.append(w)
            mems.append(m)
            starts.append(w1)
            if r == 0:
                preds = read_lines(out)
                n_out = len(preds)
                balanced = sum(totals(p, repr_) == totals(s, repr_) for p, s in zip(preds, src, strict=True))
                valid = sum(all_parse(p, repr_) for p in preds)
        w, s0 = statistics.median(walls), statistics.median(starts)
        report["predict"] = {
            "lines": len(src),
            "wall_s_median": round(w, 2),
            "reactions_per_s_end_to_end": round(len(src) / w, 1),
            "startup_s_median": round(s0, 2),
            "reactions_per_s_steady": round((len(src) - 1) / max(w - s0, 1e-9), 1),
            "peak_rss_mib_median": round(statistics.median(mems), 1),
            "balanced_lines": balanced,
            "valid_lines": valid,
            "output_lines": n_out,
            "repeats": args.repeats,
        }
        # ---------------------------------------------------------------- training
        rates, mems, feats = [], [], []
        for r in range(args.repeats):
            run_dir = tmpd / f"train{r}"
            out = tmpd / f"train{r}.json"
            cmd = [
                *GNNCA,
                "train",
                "--config",
                args.config,
                "--set",
                f"data.dir={args.built}",
                "--set",
                f"data.variant={args.variant}",
                "--set",
                f"run_dir={run_dir}",
                "--set",
                f"data.limit={args.train_lines}",
                "--set",
                "data.val_limit=200",
                "--set",
                f"train.max_steps={args.train_steps}",
                "--set",
                "train.max_minutes=0",
                "--set",
                "train.num_threads=1",
                "--set",
                "train.tensorboard=false",
                "--set",
                "train.progress=false",
            ]
            _, m, rc, err = run_measured(cmd, out)
            if rc:
                print(err, file=sys.stderr)
                return 1
            summ = json.loads((run_dir / "summary.json").read_text())
            hist = summ["history"]
            # steady rate: the trainer's own reactions/s averaged over epochs, weighted by steps
            rate = statistics.fmean(h["train"]["reactions_per_s"] for h in hist)
            rates.append(rate)
            mems.append(m)
            feats.append(summ["featurize_s"])
        report["train"] = {
            "train_lines": args.train_lines,
            "steps": args.train_steps,
            "reactions_per_s_median": round(statistics.median(rates), 1),
            "featurize_s_median": round(statistics.median(feats), 2),
            "peak_rss_mib_median": round(statistics.median(mems), 1),
            "repeats": args.repeats,
        }
    text = json.dumps(report, indent=1)
    print(text)
    p = report["predict"]
    print(
        f"predict: {p['reactions_per_s_end_to_end']} reactions/s end to end ({p['reactions_per_s_steady']} steady), "  # type: ignore[index]
        f"peak {p['peak_rss_mib_median']} MiB; balanced {p['balanced_lines']}/{p['output_lines']}"  # type: ignore[index]
    )
    t = report["train"]
    print(f"train: {t['reactions_per_s_median']} reactions/s, peak {t['peak_rss_mib_median']} MiB")  # type: ignore[index]
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0 if p["balanced_lines"] == p["output_lines"] == len(src) else 2  # type: ignore[index]


if __name__ == "__main__":
    sys.exit(main())
