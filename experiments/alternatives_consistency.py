"""How consistent the top-k alternatives of ``gnnca predict --json`` are: on how many lines ``prediction`` is not
``top_k[0]``, how many alternatives change their probability between two ``--top-k`` runs of the same lines, how
many rows repeat an earlier row up to tautomers and resonance forms, and (given a second pair, e.g. from before a
change) whether the predictions and confidences stayed the same.

    head -300 built/full/ChemAlgebra_F_T1_x1/src-test_in.txt > f1.txt
    for k in 3 5; do gnnca predict f1.txt --extent bayes --json --top-k $k > k$k.jsonl; done
    python experiments/alternatives_consistency.py k3.jsonl k5.jsonl --before old_k3.jsonl old_k5.jsonl

Measured when written (bundled models, first 300 lines of F_T1_x1 test_in, K 3 and 5, before -> after the change
that made the alternatives consistent): prediction not top_k[0] on 13 -> 0 lines at each K; alternatives whose
probability changes between K=3 and K=5: 10 rows on 6 lines -> 1 row on 1 line (a wider beam found a line
ranked above it); predictions and confidences identical. On golden/smiles_t1.in (120 lines, K 5): rows
repeating an earlier row up to tautomers 6 -> 0, predictions and confidences identical.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def read_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _rows(rec: dict[str, Any]) -> dict[str, float]:
    return {t["prediction"]: t["probability"] for t in rec.get("top_k") or []}


def consistency(few: Sequence[dict[str, Any]], many: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Counts over two runs of the same lines at a smaller and a larger ``--top-k``."""
    from gnn_chemalgebra.chem.smiles import tautomer_key

    def same_products(line: str) -> frozenset[str]:
        return frozenset(tautomer_key(t.split("}", 1)[-1]) for t in line.split("."))

    out = dict.fromkeys(("outranked_few", "outranked_many", "changed_rows", "changed_lines", "tautomer_repeats"), 0)
    out["lines"] = len(few)
    for a, b in zip(few, many, strict=True):
        for r, name in ((a, "outranked_few"), (b, "outranked_many")):
            out[name] += bool(r.get("top_k")) and r["top_k"][0]["prediction"] != r["prediction"]
        pa, pb = _rows(a), _rows(b)
        changed = [k for k in pa if k in pb and abs(pa[k] - pb[k]) > 1e-9]
        out["changed_rows"] += len(changed)
        out["changed_lines"] += bool(changed)
        keys = [same_products(t["prediction"]) for t in b.get("top_k") or []]
        out["tautomer_repeats"] += len(keys) - len(set(keys))
    return out


def same_answers(old: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]) -> dict[str, int]:
    """How many lines kept their prediction and their confidence."""
    pairs = list(zip(old, new, strict=True))
    return {
        "same_prediction": sum(a["prediction"] == b["prediction"] for a, b in pairs),
        "same_confidence": sum(a.get("confidence") == b.get("confidence") for a, b in pairs),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("few", type=Path, help="--json records at the smaller --top-k")
    ap.add_argument("many", type=Path, help="--json records of the same lines at the larger --top-k")
    ap.add_argument("--before", type=Path, nargs=2, metavar=("FEW", "MANY"), help="the same two runs from before")
    a = ap.parse_args(argv)
    few, many = read_records(a.few), read_records(a.many)
    report = {"after": consistency(few, many)}
    if a.before:
        old_few, old_many = read_records(a.before[0]), read_records(a.before[1])
        report["before"] = consistency(old_few, old_many)
        report["kept"] = same_answers(old_few + old_many, few + many)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
