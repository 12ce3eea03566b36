"""What the in-domain check "a reduction with no reducing agent in the bag" costs and buys on benchmark lines:
how many lines it marks, how many of them are wrong and how many right, and the in-domain share before and after.

The check (``gnn_chemalgebra/trust/outcomes.py``, reductants from ``gnn_chemalgebra/chem/reductants.py``)
marks a written line out of domain when it writes the oxygen atom a reduction removes (``[O]``, formula ``O``)
and no source molecule can reduce. The benchmark's own records often leave the reductant out, so it counts many
such lines right; this script measures how many, per records file: the lines the check marks that were in domain
without it, their exact match (the benchmark's scorer), the wrong ones among them with a confidence >= 0.6 (now
flagged, were not) and the right ones (now flagged, need not be), and the in-domain share and exact match in and
out of domain before and after.

Records: the bundled models' ``gnnca predict --json`` lines written before the check (``--extent bayes``, Type-1
files read as Type 1, Type-2 files as Type 2), named ``{variant}-{split}.jsonl``::

    for v in F_T1_x1:1 F_T2_x1:2 S_T1_x1:1 S_T2_x1:2; do
      IFS=: read V LT <<< "$v"; D=built/full/ChemAlgebra_$V
      for s in valid test_in; do
        gnnca predict $D/src-$s.txt --line-type $LT --extent bayes --json > runs/trust_records/$V-$s.jsonl
      done
    done
    python experiments/unreduced_lines.py --records runs/trust_records --built built/full --out F.json
    python experiments/unreduced_lines.py --records runs/trust_records --built built/full --glob 'F_T1_x1-test_in*' \
        --limit 3000   # the first lines only
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def measure(records: Path, tgt: Path, repr: str, limit: int | None = None) -> dict[str, Any]:
    from gnn_chemalgebra.evaluation.metrics import parse_prediction, parse_reference, score_pair
    from gnn_chemalgebra.trust.outcomes import reduction_without_reductant

    gold = tgt.read_text(encoding="utf-8").splitlines()
    rows = []
    with open(records, encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if limit is not None and int(r["line"]) > limit:
                break
            if r.get("blank"):
                continue
            em = score_pair(
                parse_prediction(r["prediction"], repr).terms, parse_reference(gold[r["line"] - 1], repr)
            ).em  # type: ignore[arg-type]
            # in domain without this check (records written after it carry its note: set aside)
            dom = not [x for x in r.get("domain_notes") or [] if not x.startswith("a reduction")]
            rows.append((bool(em), float(r["confidence"]), dom, reduction_without_reductant(r, repr)))
    n = len(rows)
    new = [(em, c) for em, c, dom, red in rows if red and dom]
    before_in = [em for em, _, dom, _ in rows if dom]
    before_out = [em for em, _, dom, _ in rows if not dom]
    after_in = [em for em, _, dom, red in rows if dom and not red]
    after_out = [em for em, _, dom, red in rows if not dom or red]

    def pct(xs: list[bool]) -> float | None:
        return round(100 * sum(xs) / len(xs), 2) if xs else None

    return {
        "lines": n,
        "marked": sum(red for *_, red in rows),
        "newly_out_of_domain": len(new),
        "newly_out_EM": pct([em for em, _ in new]),
        "wrong_at_0.6_now_flagged": sum(1 for em, c in new if not em and c >= 0.6),
        "right_at_0.6_now_flagged": sum(1 for em, c in new if em and c >= 0.6),
        "in_domain_share": [pct([bool(d) for *_, d, _ in rows]), pct([bool(d) and not red for *_, d, red in rows])],
        "EM_in": [pct(before_in), pct(after_in)],
        "EM_out": [pct(before_out), pct(after_out)],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=Path, required=True, help="folder of {variant}-{split}.jsonl records")
    ap.add_argument("--built", type=Path, required=True, help="built folder with the targets")
    ap.add_argument("--out", type=Path, help="write the JSON record here")
    ap.add_argument("--glob", default="*.jsonl", help="which records files (default: all)")
    ap.add_argument("--limit", type=int, help="the first N lines of each file only")
    a = ap.parse_args(argv)
    out: dict[str, Any] = {"command": "python experiments/unreduced_lines.py " + " ".join(argv or sys.argv[1:])}
    print("| set | lines | marked | newly out | their EM | wrong >= 0.6 flagged | right >= 0.6 flagged |"
          " in domain before/after | EM out before/after |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for f in [x for x in sorted(a.records.glob(a.glob)) if x.suffix == ".jsonl"]:
        variant, split = f.stem.rsplit("-", 1)
        repr = "smiles" if variant.startswith("S") else "formula"
        m = measure(f, a.built / f"ChemAlgebra_{variant}" / f"tgt-{split}.txt", repr, a.limit)
        out[f"{variant} {split}"] = m
        print(f"| {variant} {split} | {m['lines']:,} | {m['marked']} | {m['newly_out_of_domain']} | {m['newly_out_EM']}"
              f" | {m['wrong_at_0.6_now_flagged']} | {m['right_at_0.6_now_flagged']}"
              f" | {m['in_domain_share'][0]} / {m['in_domain_share'][1]}"
              f" | {m['EM_out'][0]} / {m['EM_out'][1]} |")  # fmt: skip
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
