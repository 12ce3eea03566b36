"""Recount the training-reaction outcomes and the validation in-domain share held in a trust sidecar after an
in-domain check is added, keeping the fitted calibration and the fingerprint index as they are.

The in-domain checks on what a line writes (``gnn_chemalgebra/trust/outcomes.py``) read counts taken from the
training reactions (``domain.outcomes`` in ``<checkpoint>.trust.json``). When a check is added, those counts must
be taken again; the calibration and the fingerprint index do not change, so fitting everything again
(``gnnca bench calibration``, about an hour per model on 2 cores) is not needed. This script recounts the outcomes
from the training files the sidecar names (``domain.info.files``, built by ``gnnca data build --extra``), checks
that the counts it already held come out the same, and recomputes ``domain.info.validation_in_domain`` on
validation records written by ``gnnca predict --json`` with the same model::

    python experiments/refresh_domain_outcomes.py gnn_chemalgebra/checkpoints/gnn_smiles_default.pt \\
        --valid runs/trust_records/S_T1_x1-valid.jsonl runs/trust_records/S_T2_x1-valid.jsonl

The sidecar is written atomically and stays bound to the checkpoint's sha256.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    from gnn_chemalgebra.trust.annotate import Trust
    from gnn_chemalgebra.trust.outcomes import TrainingOutcomes

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkpoint", type=Path, help="the checkpoint whose .trust.json sidecar is refreshed")
    ap.add_argument("--valid", type=Path, nargs="+", required=True, help="gnnca predict --json validation records")
    a = ap.parse_args(argv)

    trust = Trust.load_for(a.checkpoint)
    if trust is None or trust.domain is None:
        print(f"{a.checkpoint}: no sidecar with a domain index made for this file", file=sys.stderr)
        return 2
    dom = trust.domain
    files = [ROOT / f for f in dom.info["files"]]
    fresh = TrainingOutcomes.from_meta(files, trust.repr)
    old = dom.outcomes
    counts = (fresh.reactions, fresh.byproducts, fresh.rings)
    if old is not None and (old.reactions, old.byproducts, old.rings) != counts:
        print(f"{a.checkpoint}: the training files give other counts than the sidecar holds", file=sys.stderr)
        return 2
    dom.outcomes = fresh
    records = []
    for f in a.valid:
        with open(f, encoding="utf-8") as fh:
            records += [r for r in map(json.loads, fh) if not r.get("blank")]
    before = dom.info.get("validation_in_domain")
    dom.info["validation_in_domain"] = sum(dom.check(r)[1] for r in records) / len(records)
    trust.save(a.checkpoint)
    print(
        f"{a.checkpoint.name}: {fresh.reactions:,} training reactions, {fresh.unreduced:,} write a reduction with no "
        f"reducing agent; validation in domain {before:.4f} -> {dom.info['validation_in_domain']:.4f} "
        f"({len(records):,} lines)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
