#!/usr/bin/env bash
# Score a formula and a SMILES model as a user runs them (gnnca predict, then gnnca evaluate --json): two quick check
# sets (first 500 of F_T2_x1 test_in, first 200 of S_T2_x1 test_in) and, with FULL=1, whole formula test sets
# and the first NS lines of the SMILES ones. Empty checkpoint arguments = the bundled models (no --checkpoint).
#   scripts/eval_bundled.sh BUILT OUT [FORMULA.pt] [SMILES.pt] [EDIT.pt]
#   FULL=1 NS=2000 scripts/eval_bundled.sh built/extra OUT
# Type-2 files are read with --line-type auto (equal coefficients = Type 1) unless LT=2; PARTS=F or S: one only.
# FVARIANTS / SVARIANTS / SETTINGS: other variants and settings for FULL=1 (e.g. the x5 files, SETTINGS="test_in
# test_out"); experiments/bundled_records.py turns the eval-*.json files into benchmark records. JSONL=1: also keep
# gnnca predict --json (pred-*.jsonl), so scripts/error_breakdown.py --predictions needs no second prediction pass;
# SKIP_CHECK=1: without the first-500 / first-200 check lines. DECODE_SET="decode.k=v ...": gnnca predict --set each.
# PREDICT_ARGS="--workers 2": further gnnca predict options (none changes a prediction).
set -euo pipefail
built=$1 out=$2 fck=${3:-} sck=${4:-} eck=${5:-}
mkdir -p "$out"
score() {  # variant split n checkpoint-args...
  local v=$1 s=$2 n=$3; shift 3
  local repr=formula; case $v in S_*) repr=smiles;; esac
  local lt=auto; case $v in *_T2_*) lt=${LT:-auto};; esac  # LT=2: read every Type-2 line as Type 2
  local d=$built/ChemAlgebra_$v tag=${v}_${s}_${n}${LT:+_lt$LT}
  local src=$d/src-$s.txt tgt=$d/tgt-$s.txt
  if [ "$n" != 0 ]; then  # a prefix: the first n lines
    head -n "$n" "$src" > "$out/src-$tag.txt"; head -n "$n" "$tgt" > "$out/tgt-$tag.txt"
    src=$out/src-$tag.txt tgt=$out/tgt-$tag.txt
  fi
  local t0=$SECONDS
  if [ "${JSONL:-0}" = 1 ]; then  # keep the --json records too: scripts/error_breakdown.py --predictions reads them
    gnnca predict "$src" --extent bayes --line-type "$lt" --json "$@" > "$out/pred-$tag.jsonl" 2> "$out/predict-$tag.log"
    python -c "import json,sys; [print(json.loads(l)['prediction']) for l in open(sys.argv[1])]" "$out/pred-$tag.jsonl" \
      > "$out/pred-$tag.txt"
  else
    gnnca predict "$src" --extent bayes --line-type "$lt" "$@" > "$out/pred-$tag.txt" 2> "$out/predict-$tag.log"
  fi
  gnnca evaluate --pred "$out/pred-$tag.txt" --tgt "$tgt" --src "$src" --repr "$repr" --json -q > "$out/eval-$tag.json"
  python -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], 'EM', round(d['EM'], 2), 'n', sys.argv[3], 'wall_s', sys.argv[4])" \
    "$out/eval-$tag.json" "$tag" "$n" "$((SECONDS - t0))" | tee -a "$out/summary.txt"
}
fargs=(); [ -n "$fck" ] && fargs=(--checkpoint "$fck")
sargs=(); [ -n "$sck" ] && sargs=(--checkpoint "$sck"); [ -n "$eck" ] && sargs+=(--edit-checkpoint "$eck")
for kv in ${DECODE_SET:-}; do fargs+=(--set "$kv"); sargs+=(--set "$kv"); done  # e.g. DECODE_SET="decode.edit_beam=10"
for opt in ${PREDICT_ARGS:-}; do fargs+=("$opt"); sargs+=("$opt"); done
parts=${PARTS:-F S}  # PARTS=F or PARTS=S: one representation only
if [[ $parts == *F* ]]; then
  [ "${SKIP_CHECK:-0}" = 1 ] || score F_T2_x1 test_in 500 "${fargs[@]}"
  if [ "${FULL:-0}" = 1 ]; then
    for v in ${FVARIANTS:-F_T1_x1 F_T2_x1}; do for s in ${SETTINGS:-test_in test_out test_cross}; do
      score $v $s 0 "${fargs[@]}"
    done; done
  fi
fi
if [[ $parts == *S* ]]; then
  [ "${SKIP_CHECK:-0}" = 1 ] || score S_T2_x1 test_in 200 "${sargs[@]}"
  if [ "${FULL:-0}" = 1 ]; then
    for v in ${SVARIANTS:-S_T1_x1 S_T2_x1}; do for s in ${SETTINGS:-test_in test_out test_cross}; do
      score $v $s "${NS:-2000}" "${sargs[@]}"
    done; done
  fi
fi
