"""Score a GNN checkpoint on a test split: EM, the share of lines whose FIRST hypothesis balances without search,
and role accuracy per gold role (issue 14.2 and 14.4). One JSON record per (checkpoint, variant, split).

First hypothesis = the arg-max role of every molecule and the most likely leftover option, decoded exactly; it
"balances without search" when that decoding is acceptable to the predictor (balanced, something consumed, a
plausible main product) -- the constraint the mass-balance penalty trains toward. Role accuracy compares the
role head's arg-max with the gold base-reaction coefficient of each distinct source molecule, overall, per gold
role, and per line (every molecule right); ``decoded`` uses the roles of the line actually written.

    python scripts/eval_roles_balance.py --checkpoint runs/x/best.pt --built built/full \
        --variant ChemAlgebra_F_T1_x1 --split test_in --out results/x.json
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

import torch

from gnn_chemalgebra.algebra.roles import ROLE_NU
from gnn_chemalgebra.data.dataset import load_examples, to_data
from gnn_chemalgebra.evaluation.metrics import evaluate_lines
from gnn_chemalgebra.inference.decode import decode_bag
from gnn_chemalgebra.inference.predictor import Predictor

ROLE_LABEL = {-2: "consumed x2", -1: "consumed", 0: "spectator", 1: "product present", 2: "product present x2"}


def gold_nu(n: int) -> int:
    return max(-2, min(2, n))


def score(pred: Predictor, examples: list, batch_size: int = 64) -> dict:
    lines, first_ok = [], 0
    per_role: Counter = Counter()
    per_role_ok: Counter = Counter()
    line_ok = dec_line_ok = 0
    t0 = time.perf_counter()
    for s in range(0, len(examples), batch_size):
        chunk = examples[s : s + batch_size]
        outs = pred.forward([to_data(ex, pred.feat, pred.vocab, i, labels=False) for i, ex in enumerate(chunk)])
        dec = pred.decoder
        dec.warm_edit_cache(chunk, outs)
        for ex, r in zip(chunk, outs, strict=True):
            rec = pred.decode_one(ex, r)
            lines.append(rec["prediction"])
            arg = r["role_p"].argmax(-1).tolist()
            nu = {m: ROLE_NU[j] for m, j in zip(ex.mols, arg, strict=True)}
            left = pred.leftover_candidates(r)
            extras = [left[0][0]] if left and left[0][0] else []
            comps = {m: dec._comp(m) for m in [*ex.mols, *extras]}
            d = decode_bag(ex.terms, nu, extras, comps, pred.repr, ex.vtype, ex.cset, comp_lookup=dec.comp_lookup)
            first_ok += bool(dec.acceptable(d))
            gold = [gold_nu(n) for n in ex.nu_in]
            ok_all = True
            for m, g in zip(ex.mols, gold, strict=True):
                per_role[g] += 1
                hit = nu[m] == g
                per_role_ok[g] += hit
                ok_all &= hit
            line_ok += ok_all
            dec_nu = {m: gold_nu(v) for m, v in rec["nu"].items()}
            dec_line_ok += all(dec_nu.get(m, 0) == g for m, g in zip(ex.mols, gold, strict=True))
    n = len(examples)
    res = evaluate_lines(lines, [ex.tgt for ex in examples], pred.repr)
    mols = sum(per_role.values())
    return {
        "n": n,
        "EM": round(res["EM"], 2),
        "first_hypothesis_balanced": round(100.0 * first_ok / max(n, 1), 2),
        "role_line_acc": round(100.0 * line_ok / max(n, 1), 2),
        "role_line_acc_decoded": round(100.0 * dec_line_ok / max(n, 1), 2),
        "role_mol_acc": round(100.0 * sum(per_role_ok.values()) / max(mols, 1), 2),
        "role_acc_by_gold_role": {
            ROLE_LABEL[g]: {"n": per_role[g], "acc": round(100.0 * per_role_ok[g] / per_role[g], 2)}
            for g in sorted(per_role)
        },
        "lines_per_s": round(n / (time.perf_counter() - t0), 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--built", type=Path, default=Path("built/full"))
    ap.add_argument("--variant", required=True)
    ap.add_argument("--split", default="test_in")
    ap.add_argument("--limit", type=int, default=0, help="first N lines only (0 = all)")
    ap.add_argument("--label", default="", help="free text stored with the record (e.g. the run's settings)")
    ap.add_argument("--out", type=Path, help="append the record (one JSON line) to this file")
    ap.add_argument("--no-role-evidence", action="store_true", help="decode.role_evidence=false (Type 2)")
    args = ap.parse_args()
    torch.set_grad_enabled(False)
    pred = Predictor.from_checkpoint(args.checkpoint)
    if args.no_role_evidence:
        pred.role_evidence = False
    examples = load_examples(args.built, args.variant, args.split, args.limit or None)
    rec = {
        "checkpoint": args.checkpoint,
        "variant": args.variant,
        "split": args.split,
        "label": args.label,
        "role_evidence": bool(pred.role_evidence),
        **score(pred, examples),
    }
    print(json.dumps(rec))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
