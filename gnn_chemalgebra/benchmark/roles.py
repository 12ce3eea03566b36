"""``gnnca bench roles``: the role head of a trained GNN scored per role, with a calibration plot.

Runs the network on the first ``limit`` lines of each variant's split, reads the head's probabilities and the
roles of the hypotheses the predictor wrote, and hands them to :mod:`gnn_chemalgebra.evaluation.roles`
(scikit-learn metrics). Writes ``role_metrics.json``, ``role_metrics.md`` and ``role_calibration.png``.

:func:`balance_record` (``scripts/eval_roles_balance.py``) scores one checkpoint on one split for the
mass-balance penalty study: EM, the share of lines whose FIRST hypothesis balances without search, and role
accuracy per gold role and per line.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..algebra.roles import ROLE_NU
from ..checkpoint import load_checkpoint
from ..data.dataset import load_examples, to_data
from ..data.layout import variant_props, variant_short
from ..evaluation.roles import plot_role_calibration, role_metrics, role_metrics_markdown, role_samples
from ..io import atomic_write_json, atomic_write_text

if TYPE_CHECKING:
    from ..inference.predictor import Predictor


def head_probabilities(predictor: Predictor, examples: Sequence[Any], batch_size: int = 64) -> list[Any]:
    """The role head's ``[n_mols, classes]`` probabilities of each example (no decoding)."""
    out: list[Any] = []
    for s in range(0, len(examples), batch_size):
        chunk = examples[s : s + batch_size]
        data = [to_data(ex, predictor.feat, predictor.vocab, i, labels=False) for i, ex in enumerate(chunk)]
        out += [r["role_p"] for r in predictor.runner.forward(data)]
    return out


def role_report(
    checkpoint: str | Path,
    built: str | Path,
    variants: Sequence[str],
    split: str = "test_in",
    limit: int | None = 2000,
    batch_size: int = 64,
    log: Any = print,
) -> dict[str, Any]:
    """Role metrics of one checkpoint on each ``variant``'s ``split`` (first ``limit`` lines; ``None``: all)."""
    from ..inference.predictor import Predictor

    predictor = Predictor.from_checkpoint(str(checkpoint))
    trained_on = (load_checkpoint(str(checkpoint), map_location="cpu").get("meta") or {}).get("variant")
    reports: dict[str, Any] = {}
    for variant in variants:
        long_name = variant if variant.startswith("ChemAlgebra_") else f"ChemAlgebra_{variant}"
        t0 = time.perf_counter()
        examples = load_examples(built, long_name, split, limit=limit)
        reader = predictor.reader(int(variant_props(long_name)["type"]))  # the head that wrote these lines
        probs = head_probabilities(reader, examples, batch_size)
        records = reader.predict(examples, batch_size=batch_size)
        samples = role_samples(examples, probs, [r.nu for r in records])
        m = role_metrics(samples["gold"], samples["prob"], samples["decoded"])
        m.update(
            variant=long_name,
            split=split,
            lines=len(examples),
            fallback_lines=sum(r.fallback for r in records),
        )
        reports[f"{variant_short(long_name)} {split}"] = m
        log(
            f"{variant_short(long_name)} {split}: {len(examples)} lines, {m['n_molecules']} molecules, "
            f"{time.perf_counter() - t0:.0f} s"
        )
    return {
        "checkpoint": str(checkpoint),
        "trained_on": trained_on,
        "built": str(built),
        "split": split,
        "limit": limit,
        "reports": reports,
    }


def write_role_report(result: dict[str, Any], out: str | Path) -> list[Path]:
    """``role_metrics.json`` / ``.md`` and ``role_calibration.png`` under ``out``; the command goes in all three."""
    out = Path(out)
    result = {**result, "command": result.get("command") or shlex.join(["gnnca", *sys.argv[1:]])}
    limit = result["limit"]
    note = (
        f"Checkpoint `{result['checkpoint']}` (trained on {result.get('trained_on') or 'an unrecorded variant'}), "
        f"data `{result['built']}`, "
        f"{'first ' + format(limit, ',') + ' lines' if limit else 'all lines'} of each split. "
        "Unit: a distinct input molecule. *head*: the role head's most likely class; *decoded*: the class of the "
        "hypothesis the predictor wrote (balance and Type-2 evidence may overrule the head). Roles: reactant "
        "(nu < 0), reagent (nu = 0), product already present (nu > 0). Metrics by scikit-learn "
        "(precision_recall_fscore_support, confusion_matrix, calibration_curve). Plot: `role_calibration.png`.\n\n"
        f"Command: `{result['command']}`"
    )
    paths = [out / "role_metrics.json", out / "role_metrics.md", out / "role_calibration.png"]
    atomic_write_json(paths[0], result)
    atomic_write_text(
        paths[1], role_metrics_markdown(result["reports"], "Role head: per-role metrics and calibration", note)
    )
    plot_role_calibration(result["reports"], paths[2])
    return paths


BALANCE_ROLE_LABEL = {-2: "consumed x2", -1: "consumed", 0: "spectator", 1: "product present", 2: "product present x2"}


def _gold_nu(n: int) -> int:
    return max(ROLE_NU[0], min(ROLE_NU[-1], n))


def balance_scores(predictor: Predictor, examples: Sequence[Any], batch_size: int = 64) -> dict[str, Any]:
    """EM, first-hypothesis balance and role accuracy of ``examples`` (labelled: ``.nu_in``).

    First hypothesis = the arg-max role of every molecule and the most likely leftover option, decoded exactly;
    it "balances without search" when the predictor would accept it (balanced, something consumed, a plausible
    main product) -- what the mass-balance penalty trains toward. Role accuracy compares the head's arg-max with
    the gold base-reaction ``nu`` (clipped to ``ROLE_NU``) of each distinct molecule: overall, per gold role and
    per line (every molecule right); ``_decoded`` uses the roles of the line actually written.
    """
    from ..evaluation.metrics import evaluate_lines
    from ..inference.decode import decode_bag

    lines: list[str] = []
    per_role: Counter = Counter()
    per_role_ok: Counter = Counter()
    first_ok = line_ok = dec_line_ok = 0
    dec = predictor.decoder
    t0 = time.perf_counter()
    for s in range(0, len(examples), batch_size):
        chunk = examples[s : s + batch_size]
        data = [to_data(ex, predictor.feat, predictor.vocab, i, labels=False) for i, ex in enumerate(chunk)]
        outs = predictor.runner.forward(data)
        dec.warm_edit_cache(chunk, outs)
        for ex, r in zip(chunk, outs, strict=True):
            rec = predictor.decode_one(ex, r)
            lines.append(rec.prediction)
            nu = {m: ROLE_NU[j] for m, j in zip(ex.mols, r["role_p"].argmax(-1).tolist(), strict=True)}
            left = dec.leftover_candidates(r)
            extras = [left[0][0]] if left and left[0][0] else []
            comps = {m: dec._comp(m) for m in [*ex.mols, *extras]}
            d = decode_bag(ex.terms, nu, extras, comps, predictor.repr, ex.vtype, ex.cset, comp_lookup=dec.comp_lookup)
            first_ok += bool(dec.acceptable(d))
            gold = [_gold_nu(n) for n in ex.nu_in]
            for m, g in zip(ex.mols, gold, strict=True):
                per_role[g] += 1
                per_role_ok[g] += nu[m] == g
            line_ok += all(nu[m] == g for m, g in zip(ex.mols, gold, strict=True))
            dec_nu = {m: _gold_nu(v) for m, v in rec.nu.items()}
            dec_line_ok += all(dec_nu.get(m, 0) == g for m, g in zip(ex.mols, gold, strict=True))
    n = len(examples)
    res = evaluate_lines(lines, [ex.tgt for ex in examples], predictor.repr)

    def pct(k: int, of: int) -> float:
        return round(100.0 * k / max(of, 1), 2)

    return {
        "n": n,
        "EM": round(res["EM"], 2),
        "first_hypothesis_balanced": pct(first_ok, n),
        "role_line_acc": pct(line_ok, n),
        "role_line_acc_decoded": pct(dec_line_ok, n),
        "role_mol_acc": pct(sum(per_role_ok.values()), sum(per_role.values())),
        "role_acc_by_gold_role": {
            BALANCE_ROLE_LABEL[g]: {"n": per_role[g], "acc": pct(per_role_ok[g], per_role[g])} for g in sorted(per_role)
        },
        "lines_per_s": round(n / (time.perf_counter() - t0), 1),
    }


def balance_record(
    checkpoint: str | Path,
    built: str | Path,
    variant: str,
    split: str = "test_in",
    limit: int | None = None,
    label: str = "",
    role_evidence: bool | None = None,
    batch_size: int = 64,
) -> dict[str, Any]:
    """One JSON record of :func:`balance_scores` for a checkpoint on ``variant``'s ``split`` (first ``limit``
    lines; ``None``: all); ``role_evidence=False`` turns the Type-2 role evidence off, ``None`` keeps the
    checkpoint's setting."""
    import torch

    from ..inference.predictor import Predictor

    with torch.no_grad():
        predictor = Predictor.from_checkpoint(str(checkpoint)).reader(int(variant_props(variant)["type"]))
        if role_evidence is not None:
            predictor.settings.role_evidence = role_evidence
        examples = load_examples(built, variant, split, limit)
        scores = balance_scores(predictor, examples, batch_size)
    return {
        "checkpoint": str(checkpoint),
        "variant": variant,
        "split": split,
        "label": label,
        "role_evidence": bool(predictor.settings.role_evidence),
        **scores,
    }
