"""A candidate in-domain rule, measured before adoption: a line that consumes a molecule the training reactions
consumed at least K times, and writes a by-product none of those reactions wrote with it ("a known reagent used
in a way training never used it"). It is the one rule found that marks the formula Boc protection of the textbook
check (Boc2O as C10H18O5, consumed by 3 training reactions, none writing an oxygen atom), so it is weighed here on
the lines it would newly mark: how many, how many of them the benchmark counts right, and how many are wrong with a
calibrated confidence >= 0.6 (the lines a new flag would rescue) against right ones at >= 0.6 (the ones it would
wrongly discredit). A second candidate, for the formula Suzuki coupling (phenylboronic acid, held by 2 training
reactions, consumed by none): a line consuming a molecule that training reactions held but never consumed.

Records: the bundled models' ``gnnca predict --json`` lines, ``--extent bayes``, Type-1 files read as Type 1 and
Type-2 files as Type 2, every validation line and the first 3,000 (formula) / 1,000 (SMILES) test_in lines::

    for v in F_T1_x1:1:3000 F_T2_x1:2:3000 S_T1_x1:1:1000 S_T2_x1:2:1000; do
      IFS=: read V LT N <<< "$v"; D=built/full/ChemAlgebra_$V; R=runs/trust_records
      gnnca predict $D/src-valid.txt --line-type $LT --extent bayes --json > $R/$V-valid.jsonl
      head -n $N $D/src-test_in.txt > $R/$V-test_in.src
      gnnca predict $R/$V-test_in.src --line-type $LT --extent bayes --json > $R/$V-test_in.jsonl
    done
    python experiments/reagent_byproducts.py --records runs/trust_records --built built/full --train built/extra

Training side: ``meta-train.jsonl`` of the extra build's T2_x1 variants (the reactions the bundled models were
trained on); a reaction's by-products are its products other than the main one, as the in-domain checks define
them (``gnn_chemalgebra/trust/outcomes.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

KS = (3, 5, 10, 20)


def training_pairs(meta: Path, repr: str) -> tuple[Counter, Counter, Counter]:
    """How many training reactions hold each molecule, consume it, and write each (consumed molecule, by-product)
    pair."""
    from gnn_chemalgebra.trust.outcomes import split_products

    held: Counter = Counter()
    cons: Counter = Counter()
    pairs: Counter = Counter()
    with open(meta, encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            nu = [(m, int(v)) for m, v in d["nu"]]
            taken = {m for m, v in nu if v < 0}
            _, byp = split_products([m for m, v in nu if v > 0], repr)
            held.update(set(d["k"]))
            cons.update(taken)
            pairs.update((m, b) for m in taken for b in byp)
    return held, cons, pairs


def marks(consumed: list[str], byproducts: list[str], cons: Counter, pairs: Counter, k: int) -> bool:
    return any(cons[m] >= k and pairs[(m, b)] == 0 for m in consumed for b in byproducts)


def textbook_nu(source: str, prediction: str, repr: str) -> tuple[list[str], list[str]]:
    """What a textbook row's written line consumes and which by-products it writes (from the two lines)."""
    from gnn_chemalgebra.evaluation.metrics import parse_prediction
    from gnn_chemalgebra.trust.outcomes import split_products

    def canonical(mol: str) -> str:
        if repr != "smiles":
            return mol
        from rdkit import Chem

        m = Chem.MolFromSmiles(mol)
        return mol if m is None else Chem.MolToSmiles(m)

    def bag(line: str) -> Counter:
        out: Counter = Counter()
        for t in parse_prediction(line, repr).terms:
            out[canonical(t.mol)] += t.coef
        return out

    src, pred = bag(source), bag(prediction)
    taken = sorted(m for m in src if pred.get(m, 0) < src[m])
    _, byp = split_products([m for m in pred if m not in src], repr)
    return taken, byp


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=Path, required=True, help="folder of <variant>-<split>.jsonl records")
    ap.add_argument("--built", type=Path, default=Path("built/full"), help="the benchmark files (targets)")
    ap.add_argument("--train", type=Path, default=Path("built/extra"), help="the build the models trained on")
    ap.add_argument("--textbook", type=Path, default=Path("results/calibration/textbook.json"))
    args = ap.parse_args(argv)
    from gnn_chemalgebra.benchmark.calibration import exact_labels
    from gnn_chemalgebra.trust.outcomes import consumed, written_byproducts

    book = json.loads(args.textbook.read_text())["rows"] if args.textbook.is_file() else []
    for repr, letter in (("formula", "F"), ("smiles", "S")):
        meta = args.train / f"ChemAlgebra_{letter}_T2_x1" / "meta-train.jsonl"
        held, cons, pairs = training_pairs(meta, repr)
        print(f"{repr}: {sum(1 for _ in open(meta, encoding='utf-8')):,} training reactions ({meta})")
        for row in (r for r in book if r["repr"] == repr and not r["right"] and not r["flagged"]):
            taken, byp = textbook_nu(row["source"], row["prediction"], repr)
            seen = ", ".join(
                f"{m} held {held[m]}x, consumed {cons[m]}x, with {b} {pairs[(m, b)]}x" for m in taken for b in byp
            )
            seen = seen or "no by-product"
            print(f"  textbook, wrong and unflagged: {row['reaction']}: {row['prediction']} ({seen})")
        for path in sorted(args.records.glob(f"{letter}_*.jsonl")):
            variant, split = path.stem.split("-", 1)
            recs = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
            tgts = (args.built / f"ChemAlgebra_{variant}" / f"tgt-{split}.txt").read_text().splitlines()[: len(recs)]
            right = exact_labels([r["prediction"] for r in recs], tgts, repr)
            em = 100 * sum(right) / len(recs)
            out = sum(r.get("in_domain") is False for r in recs)
            pairs_ry = list(zip(recs, right, strict=True))
            loud = sum(1 for r, y in pairs_ry if not y and r["confidence"] >= 0.6 and r.get("in_domain"))
            print(f"  {path.name}: {len(recs):,} lines, EM {em:.2f}; out of domain now {out}; wrong, confidence >= 0.6 "
                  f"and in domain {loud}")  # fmt: skip
            for k in KS:
                new = [
                    (r, y)
                    for r, y in pairs_ry
                    if r.get("in_domain") is not False and marks(consumed(r), written_byproducts(r), cons, pairs, k)
                ]
                ok = sum(y for _, y in new)
                wrong_loud = sum(1 for r, y in new if not y and r["confidence"] >= 0.6)
                right_loud = sum(1 for r, y in new if y and r["confidence"] >= 0.6)
                share = 100 * len(new) / len(recs)
                print(f"    known reagent, new by-product, K={k}: newly out of domain {len(new)} ({share:.1f}%), "
                      f"right {ok}; confidence >= 0.6: wrong {wrong_loud}, right {right_loud}")  # fmt: skip
            never = [(r, y) for r, y in pairs_ry if any(held[m] and not cons[m] for m in consumed(r))]
            print(f"    consumes a molecule training reactions held but never consumed: {len(never)} lines, right "
                  f"{sum(y for _, y in never)}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
