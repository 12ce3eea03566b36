"""What the second opinion costs per line: the formula pair predicting the same Type-1 lines with and without the
mixed model writing each Type-1 line again (``gnnca predict --json`` and the Python API do; plain text output does
not), the two settings alternated in one run on one thread, medians of the repeats and their ratio.

    python experiments/second_opinion_cost.py built/full/ChemAlgebra_F_T1_x1/src-test_in.txt --lines 2000 \\
        --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path, help="Type-1 formula lines (src-*.txt of an F_T1 variant)")
    ap.add_argument("--checkpoint", type=Path, default=ROOT / "gnn_chemalgebra/checkpoints/gnn_default.pt")
    ap.add_argument("--lines", type=int, default=2000, help="the first N lines")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    import torch

    from gnn_chemalgebra.inference.predict_command import predict_lines
    from gnn_chemalgebra.inference.predictor import Predictor, PredictorOptions

    torch.set_num_threads(1)
    lines = a.src.read_text(encoding="utf-8").splitlines()[: a.lines]
    pred = Predictor.from_checkpoint(a.checkpoint, options=PredictorOptions(extent="bayes"))
    if pred.type1 is None:
        print(f"{a.checkpoint} names no Type-1 model: there is no second opinion to time", file=sys.stderr)
        return 2
    predict_lines(lines[:200], pred, line_type="1")  # warm the molecule caches
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(a.repeats):
        for second in (False, True):
            pred.second_opinion = second
            t0 = time.perf_counter()
            predict_lines(lines, pred, line_type="1")
            times[second].append((time.perf_counter() - t0) / len(lines) * 1000)
    off, on = statistics.median(times[False]), statistics.median(times[True])
    print(f"{len(lines)} Type-1 lines, {a.repeats} repeats, one thread: without a second opinion {off:.2f} ms per "
          f"line, with it {on:.2f} ms per line ({on / off:.2f}x)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
