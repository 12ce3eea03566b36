"""Why the textbook imine and Suzuki lines cannot be flagged: what the training data writes for them.
Counts over the training lines and over the bundled models' validation records, measuring whether the benchmark
ever writes the textbook answers and whether a missing-reductant rule would separate right lines from wrong ones.

Two counts. (1) Training lines (S_T1_x1 train) with an aldehyde among the source molecules: how many write the
leftover ``[O]`` (the benchmark's chain for the oxygen a reduction removes; the reductant's hydrogens are not
counted), how many write water as a new product, how many a new acyclic imine; and lines that consume a boronic
acid or ester: how many keep the boron in the main product, how many are Suzuki couplings (the boron leaves).
(2) Validation lines whose written line adds the ``[O]`` leftover (formula ``O``), split by whether the bag holds a
hydride source (a B, Al, Si or Sn atom bearing hydrogen, H2, H-, formic acid): how often such lines are right, and
at what confidence. If lines without a reductant were wrong far more often than their confidence says, "an [O]
leftover but no reductant" would be a flag; the counts say whether it is.

    python experiments/leftover_convention.py --train built/extra --built built/full --records runs/trust_records

``--records`` holds ``{variant}-valid.jsonl`` from ``gnnca predict ... --json`` (commands in the header of
``experiments/reagent_byproducts.py``).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

_COEF = re.compile(r"^\{\d+\}")
HYDRIDE_ELEMENTS = {"B", "Al", "Si", "Sn"}
HYDRIDE_SMILES = {"[H][H]", "[H-]", "[H]", "O=CO"}
HYDRIDE_FORMULAS = {"H2", "H-", "H", "CH2O2"}


def mols(line: str) -> list[str]:
    return [_COEF.sub("", m) for m in line.split(".") if m]


def hydride_source(mol: str, repr: str) -> bool:
    """Whether a molecule can give hydride/hydrogen: H2, H-, formic acid, or B/Al/Si/Sn bearing hydrogen."""
    if repr == "formula":
        if mol in HYDRIDE_FORMULAS:
            return True
        els = set(re.findall(r"[A-Z][a-z]?", mol))
        return bool(els & HYDRIDE_ELEMENTS) and "H" in els
    from rdkit import Chem

    if mol in HYDRIDE_SMILES:
        return True
    m = Chem.MolFromSmiles(mol)
    if m is None:
        return False
    return any(
        a.GetSymbol() in HYDRIDE_ELEMENTS and any(n.GetSymbol() == "H" for n in a.GetNeighbors())
        for a in Chem.AddHs(m).GetAtoms()
    )


def training_counts(train: Path) -> Counter:
    from rdkit import Chem

    aldehyde = Chem.MolFromSmarts("[CX3H1](=O)[#6]")
    imine = Chem.MolFromSmarts("[CX3;!R]=[NX2;!R]")
    src = (train / "ChemAlgebra_S_T1_x1" / "src-train.txt").read_text().splitlines()
    tgt = (train / "ChemAlgebra_S_T1_x1" / "tgt-train.txt").read_text().splitlines()
    parsed: dict[str, object] = {}

    def mol(s: str) -> object:
        if s not in parsed:
            parsed[s] = Chem.MolFromSmiles(s)
        return parsed[s]

    boronic = Chem.MolFromSmarts("[#6]B(O)O")
    c: Counter = Counter()
    for s, t in zip(src, tgt, strict=True):
        sm, tm = mols(s), mols(t)
        c["lines"] += 1
        if any("B" in x and (m := mol(x)) is not None and m.HasSubstructMatch(boronic) for x in sm if x not in tm):
            new = [x for x in tm if x not in sm]
            main = max(new, key=lambda x: m.GetNumAtoms() if (m := mol(x)) is not None else 0, default="")
            kept = "B" in main.replace("Br", "")
            c["consume a boronic acid or ester"] += 1
            c["  main product keeps boron"] += kept
            c["  main product without boron (a Suzuki coupling)"] += not kept
        if not any((m := mol(x)) is not None and m.HasSubstructMatch(aldehyde) for x in sm):
            continue
        c["aldehyde lines"] += 1
        new = [x for x in tm if x not in sm]
        c["write [O]"] += "[O]" in new
        c["write [O], no reductant in the bag"] += "[O]" in new and not any(hydride_source(x, "smiles") for x in sm)
        c["write water as a new product"] += "O" in new
        c["write a new acyclic imine"] += any((m := mol(x)) is not None and m.HasSubstructMatch(imine) for x in new)
    return c


def validation_rows(built: Path, records: Path) -> list[dict[str, object]]:
    from gnn_chemalgebra.evaluation.metrics import parse_prediction, parse_reference, score_pair

    rows: list[dict[str, object]] = []
    for variant in ("F_T1_x1", "S_T1_x1", "F_T2_x1", "S_T2_x1"):
        path = records / f"{variant}-valid.jsonl"
        if not path.is_file():
            continue
        repr = "smiles" if variant.startswith("S") else "formula"
        left = "[O]" if repr == "smiles" else "O"
        tgt = (built / f"ChemAlgebra_{variant}" / "tgt-valid.txt").read_text().splitlines()
        groups: dict[str, list[tuple[bool, float]]] = {}
        for line in path.read_text().splitlines():
            r = json.loads(line)
            gold = parse_reference(tgt[r["line"] - 1], repr)
            em = score_pair(parse_prediction(r["prediction"], repr).terms, gold).em  # type: ignore[arg-type]
            sm = mols(r["source"])
            if left in mols(r["prediction"]) and left not in sm:
                key = (
                    "[O] leftover, reductant in the bag"
                    if any(hydride_source(m, repr) for m in sm)
                    else ("[O] leftover, no reductant")
                )
            else:
                key = "no [O] leftover"
            for k in (key, "all"):
                groups.setdefault(k, []).append((em, float(r["confidence"])))
        for k, v in groups.items():
            n = len(v)
            rows.append(
                {
                    "variant": variant,
                    "lines": k,
                    "n": n,
                    "exact_match": round(100 * sum(e for e, _ in v) / n, 1),
                    "mean_confidence": round(sum(c for _, c in v) / n, 3),
                }
            )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", type=Path, default=Path("built/extra"), help="built data with the training split")
    ap.add_argument("--built", type=Path, default=Path("built/full"), help="built data with the validation targets")
    ap.add_argument("--records", type=Path, default=Path("runs/trust_records"), help="{variant}-valid.jsonl files")
    ap.add_argument("--out", type=Path, help="write the counts as JSON here")
    args = ap.parse_args()
    from rdkit import RDLogger

    RDLogger.DisableLog("rdApp.*")
    counts = training_counts(args.train)
    rows = validation_rows(args.built, args.records)
    print("training lines (S_T1_x1 train):", dict(counts))
    print("| variant | lines | n | EM % | mean confidence |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['variant']} | {r['lines']} | {r['n']} | {r['exact_match']} | {r['mean_confidence']} |")
    if args.out:
        args.out.write_text(json.dumps({"training": dict(counts), "validation": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
