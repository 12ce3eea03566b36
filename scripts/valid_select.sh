#!/usr/bin/env bash
# Validation EM (all F_T1_x1 valid lines) of single checkpoints and comma-joined ensembles, one line each, to pick
# an F_T1 ensemble on validation only:
#   scripts/valid_select.sh BUILT OUT a.pt,b.pt a.pt,b.pt,c.pt ...     (appends "<checkpoints> <EM>" to OUT/valid_em.txt)
set -euo pipefail
built=$1 out=$2; shift 2
d=$built/ChemAlgebra_F_T1_x1
mkdir -p "$out"
for combo in "$@"; do
  tag=$(echo "$combo" | md5sum | cut -c1-10)
  gnnca predict "$d/src-valid.txt" --extent bayes --line-type auto --checkpoint "$combo" > "$out/p-$tag.txt" 2> "$out/p-$tag.log"
  em=$(gnnca evaluate --pred "$out/p-$tag.txt" --tgt "$d/tgt-valid.txt" --src "$d/src-valid.txt" --repr formula --json -q |
    python -c "import json,sys; print(round(json.load(sys.stdin)['EM'], 2))")
  echo "$combo $em" | tee -a "$out/valid_em.txt"
done
