"""Throughput benchmark (issue 13): start-up, prediction, training and builder rates with peak memory.

Usage::

    python scripts/bench_throughput.py --built built/full [--baseline REV] [--repeats 3] [--only startup,formula]

The logic lives in :mod:`gnn_chemalgebra.benchmark.throughput`; see its docstring for the definitions.
"""

from __future__ import annotations

import sys

from gnn_chemalgebra.benchmark.throughput import main

if __name__ == "__main__":
    sys.exit(main())
