#!/bin/bash
# One SMILES pair (GNN + bond-edit model) on four slices: the chemist's valid set (first 500 lines), the chemist's
# test set (first 1,000), the benchmark's S_T1_x1 test_in (first 1,000) and the textbook dev part (SMILES bags and
# reaction SMILES). Needs built/chemist (gnnca data chemist built/full --out built/chemist) and built/full.
# usage: bash experiments/chemist_pairs.sh TAG GNN_CHECKPOINT EDIT_CHECKPOINT
set -euo pipefail
tag=$1; ck="--checkpoint $2 --edit-checkpoint $3"
E=runs/chemist/eval; mkdir -p "$E"
head -n 500 built/chemist/smiles/src-valid.txt > $E/src-cv5.txt; head -n 500 built/chemist/smiles/tgt-valid.txt > $E/tgt-cv5.txt
head -n 1000 built/chemist/smiles/src-test.txt > $E/src-ct1.txt; head -n 1000 built/chemist/smiles/tgt-test.txt > $E/tgt-ct1.txt
head -n 1000 built/full/ChemAlgebra_S_T1_x1/src-test_in.txt > $E/src-s1.txt
head -n 1000 built/full/ChemAlgebra_S_T1_x1/tgt-test_in.txt > $E/tgt-s1.txt
for s in cv5 ct1; do
  gnnca predict $E/src-$s.txt --extent bayes --line-type 1 --repr smiles --byproducts chemist --quiet --skip-invalid \
    $ck > $E/pred-$s-$tag.txt
  gnnca evaluate --pred $E/pred-$s-$tag.txt --tgt $E/tgt-$s.txt --src $E/src-$s.txt --repr smiles --json -q \
    > $E/eval-$s-$tag.json
done
gnnca predict $E/src-s1.txt --extent bayes --quiet $ck > $E/pred-s1-$tag.txt
gnnca evaluate --pred $E/pred-s1-$tag.txt --tgt $E/tgt-s1.txt --src $E/src-s1.txt --repr smiles --json -q \
  > $E/eval-s1-$tag.json
gnnca bench textbook --part dev --styles smiles,reaction $ck --json $E/textbook-dev-$tag.json
for s in cv5 ct1 s1; do
  python3 -c "import json, sys; print(sys.argv[1], sys.argv[2], 'EM', json.load(open(sys.argv[3]))['EM'])" \
    "$tag" "$s" "$E/eval-$s-$tag.json"
done
