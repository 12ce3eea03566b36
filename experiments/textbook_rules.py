"""The lines of a `gnnca bench textbook --records` file that explicit rules wrote (docs/rules.md), counted per
part and input style, and how many of them are right; per rule on the development part only, the held-out part in
totals, so that no held-out line is looked at one by one.

    python experiments/textbook_rules.py results/textbook/rules_dev_records.jsonl \
        results/textbook/rules_held_out_records.jsonl

Per part and style: the lines a rule wrote and how many of them are right, and the lines the rules turned from
wrong to right (against the records of the same part without rules, when given with --before). Per rule only on
the development part: the held-out part is reported in totals.
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections import Counter
from pathlib import Path


def _records(path: Path) -> list[dict]:
    """A records file as written, or gzipped as stored in results/textbook."""
    with (gzip.open if path.suffix == ".gz" else open)(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description="the textbook lines explicit rules wrote, and how many are right")
    ap.add_argument("records", nargs="+", type=Path)
    ap.add_argument("--before", nargs="*", type=Path, default=[], help="the same parts' records without the rules")
    args = ap.parse_args()
    before = {(r["id"], r["style"]): r for p in args.before for r in _records(p)}
    print("| part | style | lines | written by a rule | of them right | wrong -> right (against --before) |")
    print("|---|---|---:|---:|---:|---:|")
    per_rule: Counter = Counter()
    for path in args.records:
        recs = _records(path)
        for style in ("smiles", "formula", "reaction"):
            rows = [r for r in recs if r["style"] == style]
            ruled = [r for r in rows if r.get("written_by", "model") != "model"]
            gained = sum(
                1 for r in rows if r["right"] and (r["id"], style) in before and not before[(r["id"], style)]["right"]
            )
            part = rows[0]["part"] if rows else "?"
            right = sum(r["right"] for r in ruled)
            shown = gained if before else "-"
            print(f"| {part} | {style} | {len(rows)} | {len(ruled)} | {right} | {shown} |")
            if part == "dev":
                for r in ruled:
                    per_rule[(r["written_by"], r["right"])] += 1
    if per_rule:
        print("\n| rule (dev, all styles) | lines | right |\n|---|---:|---:|")
        for name in sorted({k for k, _ in per_rule}):
            n = per_rule[(name, True)] + per_rule[(name, False)]
            print(f"| {name} | {n} | {per_rule[(name, True)]} |")


if __name__ == "__main__":
    main()
