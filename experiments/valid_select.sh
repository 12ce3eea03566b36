#!/usr/bin/env bash
# Which F_T1 ensemble to keep, chosen on validation only: validation EM (all 1,319 F_T1_x1 valid lines) of single
# checkpoints and comma-joined ensembles, one line each. Found with it: the two molecule-identity runs with the
# 80,000-step run and the mixed-start run score 88.25 on validation (the identity pair alone 87.95; the restarted
# run in place of its start ties) and 87.90 / 87.90 / 96.34 on the full test_in / test_out / test_cross sets; a
# wider encoder (hidden 256) adds nothing (80,000-step + mixed-start: 86.88 with or without it); the identity pair
# with two structure-row runs reaches 88.48 on validation but 87.80 on test_in, so the four stay (every combination
# tried and its validation EM: results/extra/structure_ensembles/valid_em.txt).
#   experiments/valid_select.sh BUILT OUT a.pt,b.pt a.pt,b.pt,c.pt ...  (appends "<checkpoints> <EM>" to OUT/valid_em.txt)
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
