#!/usr/bin/env bash
# GPU readiness in one run (sized for 8 minutes on one GPU; no network needed): every figure is a JSON file under $OUT.
#
#   OUT=/path/to/empty/folder experiments/gpu_check.sh                       # on a machine with CUDA
#   GPU_CHECK_DEVICE=cpu OUT=gpu_check_cpu experiments/gpu_check.sh         # the same steps, tiny, on the CPU
#
# Steps (each one's output in $OUT/<step>.log, its figures in $OUT/<step>.json):
#   env        torch, CUDA and the GPU's name, bf16 support
#   build      a small benchmark build of its own (gnnca data build --limit), since built/ is not in the tree
#   train_amp  gnnca train on that build: CUDA, bf16 autocast (train.amp), mass-balance penalty (weight 0.1)
#   bench_gpu  gnnca bench gpu: the same GNN trained with bf16 and fp32 on CUDA and on the CPU (loss drift check)
#   predict    gnnca predict with the bundled models on CUDA and on the CPU, same lines: predictions compared
#   torchrun   a torchrun launch (one process, the distributed sampler) of gnnca train
# $OUT/summary.json holds each step's exit code and wall seconds; the script exits 1 when a step failed.
# PYTHON (default: python, else python3) must have the project's dependencies; the package is read from this checkout.
set -uo pipefail
SELF="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$SELF")/.."
DEVICE="${GPU_CHECK_DEVICE:-cuda}"
PY="${PYTHON:-$(command -v python || command -v python3)}"
export OUT="${OUT:-$(mktemp -d)}"
mkdir -p "$OUT"
if [ -z "${GPU_CHECK_WORK:-}" ]; then  # the first invocation; each step runs as "$SELF --step ..." under timeout
  GPU_CHECK_WORK="$(mktemp -d)"
  export GPU_CHECK_WORK
  trap 'rm -rf "$GPU_CHECK_WORK"' EXIT
fi
WORK="$GPU_CHECK_WORK"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
if [ "$DEVICE" = cpu ]; then  # the reduced mode: every path once, tiny sizes
  LIMIT=60; STEPS=4; GLINES=24; GEPOCHS=1; NF=6; NS=0; DDP_STEPS=2; STEP_TIMEOUT=120
  SMALL=(--set model.hidden=16 --set model.layers=1 --set train.batch_size=8)
else
  LIMIT=3000; STEPS=300; GLINES=5000; GEPOCHS=2; NF=500; NS=200; DDP_STEPS=100; STEP_TIMEOUT=240
  SMALL=()
fi
gnnca() { "$PY" -m gnn_chemalgebra.cli "$@"; }
BUILT="$WORK/built"
TRAIN=(--config configs/gnn_cpu.yaml --set "data.dir=$BUILT" --set data.variant=ChemAlgebra_F_T1_x1
  --set data.val_limit=50 --set "train.device=$DEVICE" --set train.amp=true --set train.mass_balance_weight=0.1
  --set train.epochs=0 --set train.tensorboard=false --set train.progress=false "${SMALL[@]}")

step() {  # step NAME COMMAND...: run it with a time limit, log it, record exit code and wall seconds
  local name=$1 start rc
  shift
  start=$(date +%s.%N)
  timeout "$STEP_TIMEOUT" bash "$SELF" --step "$@" > "$OUT/$name.log" 2>&1
  rc=$?
  "$PY" - "$WORK/steps.json" "$name" "$rc" "$start" "$(date +%s.%N)" <<'EOF'
import json, sys
path, name, rc, t0, t1 = sys.argv[1:]
steps = json.load(open(path))
steps[name] = {"rc": int(rc), "wall_s": round(float(t1) - float(t0), 1)}
json.dump(steps, open(path, "w"), indent=1)
EOF
  echo "gpu_check: $name rc=$rc" >&2
}

env_json() {
  "$PY" - "$OUT/env.json" "$DEVICE" <<'EOF'
import json, sys
import torch
cuda = torch.cuda.is_available()
info = {"device": sys.argv[2], "torch": torch.__version__, "cuda_available": cuda,
        "cuda_version": torch.version.cuda, "gpu": torch.cuda.get_device_name(0) if cuda else None,
        "bf16_supported": bool(cuda and torch.cuda.is_bf16_supported())}
json.dump(info, open(sys.argv[1], "w"), indent=1)
sys.exit(0 if cuda or sys.argv[2] == "cpu" else 1)
EOF
}

run_summary() {  # run_summary RUN_DIR OUT_JSON: the figures of a training run's summary.json
  "$PY" - "$1" "$2" <<'EOF'
import json, math, sys
s = json.load(open(f"{sys.argv[1]}/summary.json"))
last = s["history"][-1]["train"]
losses = {k: last[k] for k in ("total", "role", "leftover", "penalty") if k in last}
out = {k: s.get(k) for k in ("device", "world_size", "steps", "stop_reason", "n_train", "n_params",
                             "train_seconds", "train_reactions_per_s")}
out.update(last_epoch_losses=losses, best=s.get("best"), losses_finite=all(math.isfinite(v) for v in losses.values()))
json.dump(out, open(sys.argv[2], "w"), indent=1)
sys.exit(0 if out["losses_finite"] and "penalty" in losses else 1)
EOF
}

train_amp() {
  gnnca train "${TRAIN[@]}" --set "train.max_steps=$STEPS" --set "run_dir=$WORK/runs/amp" &&
    run_summary "$WORK/runs/amp" "$OUT/train_amp.json"
}

predict_pair() {  # predict_pair VARIANT N REPR: the same lines on $DEVICE and on the CPU, compared and scored
  local v=$1 n=$2 r=$3 d="$WORK/pred_$1"
  mkdir -p "$d"
  head -n "$n" "$BUILT/$v/src-test_in.txt" > "$d/src-test_in.txt"
  head -n "$n" "$BUILT/$v/tgt-test_in.txt" > "$d/tgt.txt"
  gnnca predict "$d/src-test_in.txt" --extent bayes --json --device "$DEVICE" > "$d/dev.jsonl" &&
    gnnca predict "$d/src-test_in.txt" --extent bayes --json --device cpu > "$d/cpu.jsonl" || return 1
  for side in dev cpu; do
    "$PY" -c 'import json,sys; [print(json.loads(l).get("prediction") or "") for l in open(sys.argv[1])]' \
      "$d/$side.jsonl" > "$d/$side.txt"
    gnnca evaluate --pred "$d/$side.txt" --tgt "$d/tgt.txt" --repr "$r" --json -q > "$d/$side.eval.json" || return 1
  done
  "$PY" - "$d" "$v" "$DEVICE" "$OUT/predict_$v.json" <<'EOF'
import json, sys
d, v, device, out = sys.argv[1:]
dev = [json.loads(l) for l in open(f"{d}/dev.jsonl")]
cpu = [json.loads(l) for l in open(f"{d}/cpu.jsonl")]
conf = [abs((a.get("confidence") or 0) - (b.get("confidence") or 0)) for a, b in zip(dev, cpu)]
res = {"variant": v, "split": "test_in", "lines": len(dev), "device": device,
       "same_prediction": sum(a.get("prediction") == b.get("prediction") for a, b in zip(dev, cpu)),
       "max_confidence_diff": max(conf, default=0.0),
       "eval_device": json.load(open(f"{d}/dev.eval.json")), "eval_cpu": json.load(open(f"{d}/cpu.eval.json"))}
json.dump(res, open(out, "w"), indent=1)
sys.exit(0 if len(dev) == len(cpu) > 0 else 1)
EOF
}

predict() {
  predict_pair ChemAlgebra_F_T1_x1 "$NF" formula || return 1
  if [ "$NS" -gt 0 ]; then predict_pair ChemAlgebra_S_T1_x1 "$NS" smiles || return 1; fi
}

torchrun_train() {
  "$PY" -m torch.distributed.run --standalone --nproc_per_node=1 -m gnn_chemalgebra.cli train "${TRAIN[@]}" \
    --set train.sampler=distributed --set "train.max_steps=$DDP_STEPS" --set "run_dir=$WORK/runs/ddp" &&
    run_summary "$WORK/runs/ddp" "$OUT/torchrun.json"
}

if [ "${1:-}" = --step ]; then  # one step, run by step() under its time limit
  shift
  "$@"
  exit
fi

echo '{}' > "$WORK/steps.json"
step env env_json
step build gnnca data build --out "$BUILT" --limit "$LIMIT" --workers 0
step train_amp train_amp
step bench_gpu gnnca bench gpu --built "$BUILT" --variant ChemAlgebra_F_T1_x1 --config configs/gnn_cpu.yaml \
  --lines "$GLINES" --epochs "$GEPOCHS" --json "$OUT/bench_gpu.json"
step predict predict
step torchrun torchrun_train

"$PY" - "$WORK/steps.json" "$OUT/summary.json" "$DEVICE" <<'EOF'
import json, sys
steps = json.load(open(sys.argv[1]))
ok = all(s["rc"] == 0 for s in steps.values())
json.dump({"device": sys.argv[3], "ok": ok, "steps": steps}, open(sys.argv[2], "w"), indent=1)
print(json.dumps({"device": sys.argv[3], "ok": ok, "steps": steps}))
sys.exit(0 if ok else 1)
EOF
