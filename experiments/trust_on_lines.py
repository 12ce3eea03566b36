"""How far the trust fields hold on a file of benchmark lines: for the records of ``gnnca predict --json``, the
exact match of the written line (against the target file), the calibrated confidence's ECE (10 bins), AUROC and
exact match of the 80% most confident lines, the share marked in domain and the exact match in and out of domain,
and the conformal prediction sets: the share of lines whose set holds the right line, the mean set size, the
shares of empty sets and of lines without a set.

Records written with ``--coverage`` carry their sets; records written with ``--top-k K --json`` only get them here
from the conformal sidecar (``--conformal``, ``--coverage``, ``--checkpoint`` naming the model whose fit applies),
by the function ``gnnca predict --coverage`` calls (``inference.conformal.annotate_sets``), so one prediction run
serves several coverages:

    gnnca predict LINES.txt --extent bayes --top-k 5 --json --line-type 1 > recs.jsonl
    python experiments/trust_on_lines.py recs.jsonl TGT.txt --repr formula \\
        --conformal results/conformal/conformal_bundled.json --coverage 0.9 --coverage 0.8 \\
        --checkpoint gnn_chemalgebra/checkpoints/gnn_default.pt
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def _frac(a: float, n: int) -> float | None:
    return round(a / n, 4) if n else None


def trust(records: list[dict], targets: list[str], repr: str) -> dict:
    """Exact match, ECE, AUROC, EM@80 and the in-domain split of the records' written lines."""
    from gnn_chemalgebra.benchmark.calibration import exact_labels
    from gnn_chemalgebra.evaluation.calibration import calibration_summary

    y = exact_labels([r["prediction"] for r in records], targets[: len(records)], repr)
    s = calibration_summary([float(r["confidence"]) for r in records], y, coverages=(0.8,))
    ins = [r.get("in_domain") is True for r in records]
    n_in = sum(ins)
    return {
        "lines": len(records),
        "EM": round(s["EM"], 4),
        "ECE": round(s["ECE"], 4),
        "AUROC": None if s["AUROC"] is None else round(s["AUROC"], 4),
        "EM@80": round(s["EM@80"], 4),
        "in_domain": _frac(n_in, len(records)),
        "EM_in": _frac(sum(a for a, b in zip(y, ins, strict=True) if b), n_in),
        "EM_out": _frac(sum(a for a, b in zip(y, ins, strict=True) if not b), len(records) - n_in),
    }


def measure(records: list[dict], targets: list[str], repr: str) -> dict:
    """Coverage and set sizes of records that carry ``prediction_set``."""
    from gnn_chemalgebra.benchmark.calibration import exact_labels

    if len(targets) < len(records):
        raise SystemExit(f"{len(targets)} target lines for {len(records)} records")
    with_set = [(r, t) for r, t in zip(records, targets, strict=False) if r.get("prediction_set") is not None]
    covered = [
        any(exact_labels([m["prediction"] for m in r["prediction_set"]], [t] * len(r["prediction_set"]), repr))
        for r, t in with_set
    ]
    n = len(with_set)
    sizes = [r["set_size"] for r, _ in with_set]
    return {
        "with_set": n,
        "coverage": _frac(sum(covered), n),
        "mean_set_size": _frac(sum(sizes), n),
        "empty": _frac(sizes.count(0), n),
        "singletons": _frac(sizes.count(1), n),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records", type=Path, help="gnnca predict --json output")
    ap.add_argument("targets", type=Path, help="tgt-*.txt of the same lines")
    ap.add_argument("--conformal", type=Path, help="sidecar to apply (records written without --coverage)")
    ap.add_argument("--coverage", type=float, action="append", default=[])
    ap.add_argument("--checkpoint", type=Path, help="the model whose fit applies (with --conformal)")
    ap.add_argument("--top-k", type=int, default=5)
    ap.add_argument("--repr", choices=("formula", "smiles"), required=True)
    ap.add_argument("--meta", type=Path, help="meta-*.jsonl of the records' lines (with --drop-meta, --keep-meta)")
    ap.add_argument("--drop-meta", type=Path, help="leave out the lines whose reaction this meta file lists")
    ap.add_argument("--keep-meta", type=Path, help="keep only the lines whose reaction this meta file lists")
    ap.add_argument(
        "--retrust", type=Path, help="annotate the records again with the sidecars beside this checkpoint (top-k 5)"
    )
    ap.add_argument("--write-records", type=Path, help="with --retrust: write the annotated records (JSON lines)")
    ap.add_argument(
        "--keep-domain",
        action="store_true",
        help="with --retrust: keep the records' in-domain fields (annotated with the same in-domain index)",
    )
    args = ap.parse_args(argv)
    from gnn_chemalgebra.inference.conformal import ConformalTable, annotate_sets
    from gnn_chemalgebra.io import read_lines, sha256_file

    records = [json.loads(x) for x in read_lines(args.records)]
    records = [r for r in records if "prediction" in r and r.get("error") is None and not r.get("blank")]
    targets = all_targets = read_lines(args.targets)
    if args.retrust is not None:  # what the records say with the sidecars there now (the same as predicting again)
        from gnn_chemalgebra.trust.annotate import Trust

        sidecars = Trust.load_for(args.retrust)
        if sidecars is None:
            raise SystemExit(f"no calibration sidecars beside {args.retrust}")
        sidecars.annotate_many(records, args.top_k, domain=not args.keep_domain)
        if args.write_records is not None:  # annotated once, read again by other rows (no --retrust there)
            args.write_records.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    for path, inside in ((args.drop_meta, False), (args.keep_meta, True)):
        if path is None:  # e.g. test_in without (or with only) the reactions of a shifted split
            continue
        listed = {json.loads(x)["rxn"] for x in read_lines(path)}
        rxn = [json.loads(x)["rxn"] for x in read_lines(args.meta)]
        keep = [i for i, r in enumerate(records) if (rxn[r["line"] - 1] in listed) == inside]
        records = [records[i] for i in keep]
        targets = [all_targets[r["line"] - 1] for r in records]
    if not records:
        raise SystemExit(f"{args.records}: no predicted line")
    repr = args.repr
    rows = []
    summary = trust(records, targets, repr)
    if args.conformal is None:
        rows.append({"coverage_asked": None, **measure(records, targets, repr)})
    else:
        table = ConformalTable.load(args.conformal)
        fit = table.for_checkpoint(sha256_file(args.checkpoint))
        if fit is None:
            raise SystemExit(f"{args.conformal} holds no fit for {args.checkpoint}")
        for c in args.coverage or [0.9]:
            recs = [dict(r) for r in records]
            annotate_sets(recs, fit, c, args.top_k, table.score)
            notes = sorted({r["conformal_note"] for r in recs if r.get("conformal_note")})
            rows.append({"coverage_asked": c, **measure(recs, targets, repr), "no_set_reasons": notes})
    out = {"records": str(args.records), "targets": str(args.targets), **summary, "sets": rows}
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
