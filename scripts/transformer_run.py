"""Train the sequence-Transformer baseline on one variant, decode its test settings, score with the evaluator.

Why a script: the benchmark needs the baseline's numbers produced by one reproducible command, with the
records in the project's results format (``model``, ``variant``, ``setting``, EM/JAC/F1, molecule-only
scores, ``n``, ``command``) plus its speed (training and prediction reactions/s, parameters).

Example (a couple of minutes on CPU)::

    python scripts/transformer_run.py --built /tmp/tf_built --variant ChemAlgebra_F_T1_x1 \
        --config configs/transformer_cpu.yaml --minutes 2 --beam 5 --out results/transformer_F_T1_x1.json
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

from gnn_chemalgebra.config import load_config
from gnn_chemalgebra.data.layout import TEST_SETTINGS, split_files, variant_props, variant_short
from gnn_chemalgebra.io import atomic_write_json, read_lines
from gnn_chemalgebra.training.seq2seq import load_model, train, write_predictions


def well_formed(lines: list[str], repr_: str) -> tuple[list[str], int]:
    """A decoded line with broken ``{k}`` syntax (e.g. ``{5}{5}CC``) is an error for the evaluator; a model's
    output is scored instead: such a line becomes an empty prediction (all false negatives) and is counted."""
    from gnn_chemalgebra.errors import InputError
    from gnn_chemalgebra.evaluation.metrics import parse_prediction

    out, bad = [], 0
    for line in lines:
        try:
            parse_prediction(line, repr_)  # type: ignore[arg-type]
            out.append(line)
        except InputError:
            out.append("")
            bad += 1
    return out, bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--built", required=True, help="built data root (gnnca data build --out)")
    ap.add_argument("--variant", default="ChemAlgebra_F_T1_x1")
    ap.add_argument("--config", default="configs/transformer_cpu.yaml")
    ap.add_argument("--minutes", type=float, default=0.0, help="training wall-clock cap (0 = config's)")
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--max-len", type=int, default=200)
    ap.add_argument("--limit-test", type=int, default=0, help="decode only the first N lines of each test set")
    ap.add_argument("--run-dir", default="")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--skip-train", action="store_true", help="use <run_dir>/best.pt as it is")
    ap.add_argument("--out", default="", help="JSON file for the records (default <run_dir>/results.json)")
    ap.add_argument("--model-name", default="transformer", help="the records' model name")
    ap.add_argument("--settings", default="", help="comma-separated test settings (default: all three)")
    ap.add_argument("--set", dest="overrides", action="append", default=[], help="config override key=value")
    args = ap.parse_args(argv)
    command = "python " + " ".join(shlex.quote(a) for a in [sys.argv[0], *(argv or sys.argv[1:])])

    short = variant_short(args.variant)
    run_dir = Path(args.run_dir or f"runs/transformer_{short}")
    overrides = [f"data.dir={args.built}", f"data.variant={args.variant}", f"run_dir={run_dir}"]
    if args.minutes:
        overrides.append(f"train.max_minutes={args.minutes}")
    cfg = load_config(args.config, overrides + args.overrides)

    summary = None
    if not args.skip_train:
        summary = train(cfg, resume=args.resume)
        print(json.dumps({k: v for k, v in summary.items() if k != "best_eval"}, indent=1), file=sys.stderr)
    ckpt = run_dir / "best.pt" if (run_dir / "best.pt").exists() else run_dir / "last.pt"
    lm = load_model(ckpt)

    from gnn_chemalgebra.evaluation.metrics import evaluate_lines  # noqa: PLC0415

    repr_ = str(variant_props(args.variant)["repr"])
    records = []
    speeds = {}
    for setting in args.settings.split(",") if args.settings else TEST_SETTINGS:
        src_p, tgt_p, _ = split_files(Path(args.built), args.variant, setting)
        if not src_p.exists():
            continue
        src, tgt = read_lines(src_p), read_lines(tgt_p)
        if args.limit_test:
            src, tgt = src[: args.limit_test], tgt[: args.limit_test]
            tmp_src = run_dir / f"src-{setting}.limited.txt"
            tmp_src.write_text("\n".join(src) + "\n")
            src_p = tmp_src
        t0 = time.perf_counter()
        info = write_predictions(
            lm, src_p, run_dir / f"pred-{setting}.beam{args.beam}.txt", beam=args.beam, max_len=args.max_len
        )
        speeds[setting] = info["reactions_per_s"]
        top1, n_bad = well_formed(read_lines(info["top1_file"]), repr_)
        scores = evaluate_lines(top1, tgt, repr_, "paper", src_lines=src)
        beam_lines, _ = well_formed(read_lines(info["beam_file"]), repr_)
        beam_scores = evaluate_lines(beam_lines, tgt, repr_, "paper", beam=args.beam)
        rec = {
            "model": args.model_name,
            "variant": short,
            "setting": setting,
            **{k: scores[k] for k in ("EM", "JAC", "F1", "mol_JAC", "mol_F1", "n")},
            f"top{args.beam}_EM": beam_scores.get("topk", {}).get(str(args.beam)),
            "VAL": scores.get("VAL"),
            "malformed_predictions": n_bad,
            "BAL": scores.get("BAL"),
            "beam": args.beam,
            "predict_reactions_per_s": info["reactions_per_s"],
            "decode_seconds": time.perf_counter() - t0,
            "checkpoint": str(ckpt),
            "command": command,
        }
        records.append(rec)
        print(json.dumps(rec), file=sys.stderr)
    out = {
        "records": records,
        "train": (
            {k: summary[k] for k in ("step", "epoch", "stop_reason", "params", "train_examples",
                                     "train_reactions_per_s", "train_tokens_per_s", "train_seconds",
                                     "best_value", "best_eval", "last_eval", "device")}
            if summary
            else None
        ),
        "predict_reactions_per_s": speeds,
    }  # fmt: skip
    out_path = Path(args.out) if args.out else run_dir / "results.json"
    atomic_write_json(out_path, out)
    print(f"wrote {out_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
