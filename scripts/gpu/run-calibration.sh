#!/usr/bin/env bash
# Calibrates and validates clustersim with the CUDA backend on a GPU machine without Node.js, writing
# everything under $OUT/calibration. Needs .gpu/ from scripts/gpu/prepare-bundle.sh (carry ".gpu").
# Run from the project root on the GPU machine:
#   bash scripts/gpu/run-calibration.sh            # full plan (a few minutes of measurements)
#   bash scripts/gpu/run-calibration.sh --quick    # small plan, for a first check
# An interrupted calibration leaves its measurement log in $OUT/calibration/measurements.jsonl; copy it to
# reports/calibration/h200/resume.jsonl before the next run and it is resumed instead of restarted (calibrate
# refuses it if the machine, driver or NCCL differ). A complete log committed with a profile is never resumed.
set -uo pipefail
quick=""
[[ "${1:-}" == "--quick" ]] && quick="--quick"
# The whole script stays inside RUN_BUDGET_S (default 540 s, under the device tool's 600 s per call), so that it
# ends and writes what it has before the call is cut: calibrate gets what is left after the short measurements
# minus VALIDATE_RESERVE_S (default 150) for validate, and at most CALIBRATE_TIMEOUT_S / VALIDATE_TIMEOUT_S.
deadline=$((SECONDS + ${RUN_BUDGET_S:-540}))
left() { echo $((deadline - SECONDS)); }
cap() { local a=$1 b=$2; (( a < b )) && echo "$a" || echo "$b"; }
out="${OUT:-/tmp/clustersim-out}/calibration"
mkdir -p "$out"
# Nothing from an earlier run may pass for this one's results; an earlier measurement log is kept aside, under a
# name of its own, and offered for resuming only when that run left no profile.
if [[ -s "$out/measurements.jsonl" ]]; then
  prev="$out/measurements.prev-$(date -u +%Y%m%dT%H%M%SZ).jsonl"
  mv "$out/measurements.jsonl" "$prev"
  if [[ -s "$out/profile.json" ]]; then
    echo "the earlier complete run's log is kept as $prev"
  else
    echo "an earlier interrupted run's log is kept as $prev" \
      "(copy it to reports/calibration/h200/resume.jsonl to resume it)"
  fi
fi
rm -f "$out"/profile.json "$out"/validate.json "$out"/host-op.json "$out"/gemm-alignment.json \
  "$out"/attention.json "$out"/softmax-fallback.json "$out"/llama-layer.json
# Stop a step by SIGINT, which calibrate and validate handle (they keep what they measured and write it), and kill it
# 15 s later if it is still running.
stop_after() { timeout -s INT -k 15 "$@"; }

# shellcheck disable=SC1091
source .gpu/enter.sh >"$out/machine.txt" 2>&1
cat "$out/machine.txt"
app=/tmp/clustersim-app
rm -rf "$app" && mkdir -p "$app"
python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .gpu/app.tar.xz "$app" \
  || { echo "cannot unpack .gpu/app.tar.xz" >&2; exit 1; }
cli=(node "$app/bin/clustersim.js")
{ nvidia-smi; nvidia-smi topo -m; } > "$out/nvidia-smi.txt" 2>&1 || true
env | grep -E '^(NCCL_|CUDA_VISIBLE_DEVICES|LD_LIBRARY_PATH)' > "$out/env.txt" || true

# The host cost of one eager PyTorch call on this host (training.hostOpUs); a few seconds, needs PyTorch.
echo "== host cost of an eager PyTorch call"
if stop_after 120 python3 scripts/measure-host-op.py --device cuda --json \
  >"$out/host-op.json" 2>"$out/host-op.stderr.txt"; then
  cat "$out/host-op.json"
else
  echo "host-op measurement failed:"; cat "$out/host-op.stderr.txt"
fi

# The LM head's misaligned-GEMM slowdown by alignment (MISALIGNED_GEMM_SLOWDOWN), a few seconds, needs PyTorch.
echo "== misaligned LM-head GEMMs"
if stop_after 60 python3 scripts/measure-gemm-alignment.py --device cuda --json \
  >"$out/gemm-alignment.json" 2>"$out/gemm-alignment.stderr.txt"; then
  python3 -c 'import json,sys; print("slowdown by alignment:", json.load(open(sys.argv[1]))["slowdownByAlignment"])' \
    "$out/gemm-alignment.json"
else
  echo "gemm-alignment measurement failed:"; cat "$out/gemm-alignment.stderr.txt"
fi

resume=()
if [[ -s reports/calibration/h200/resume.jsonl ]]; then
  cp reports/calibration/h200/resume.jsonl "$out/measurements.jsonl"
  resume=(--resume)
fi

echo "== calibrate $quick ${resume[*]}"
calibrate_s=$(cap "${CALIBRATE_TIMEOUT_S:-420}" $(( $(left) - ${VALIDATE_RESERVE_S:-150} )))
(( calibrate_s < ${MIN_CALIBRATE_S:-30} )) \
  && { echo "only $(left) s left of RUN_BUDGET_S: not enough to calibrate"; exit 1; }
echo "calibrate gets at most $calibrate_s s ($(left) s left of the budget)"
stop_after "$calibrate_s" "${cli[@]}" calibrate --backend cuda $quick "${resume[@]}" \
  --out "$out/profile.json" --log "$out/measurements.jsonl" >"$out/calibrate.txt" 2>"$out/calibrate.stderr.txt"
echo "calibrate exit status $?"
cat "$out/calibrate.txt"; tail -n 30 "$out/calibrate.stderr.txt"
if [[ ! -s "$out/profile.json" ]]; then
  if [[ -s "$out/measurements.jsonl" ]]; then
    echo "no profile: see $out/calibrate.stderr.txt; the log keeps what was measured" \
      "(copy it to reports/calibration/h200/resume.jsonl to resume)"
  else
    echo "no profile and no measurements: see $out/calibrate.stderr.txt"
  fi
  exit 1
fi

echo "== validate $quick"
validate_s=$(cap "${VALIDATE_TIMEOUT_S:-240}" $(( $(left) - 5 )))
(( validate_s < 10 )) \
  && { echo "only $(left) s left of RUN_BUDGET_S: no time to validate; the profile is kept"; exit 1; }
echo "validate gets at most $validate_s s"
stop_after "$validate_s" "${cli[@]}" check-profile --profile "$out/profile.json" $quick \
  --out "$out/validate.json" >"$out/validate.txt" 2>"$out/validate.stderr.txt"
echo "validate exit status $?"
cat "$out/validate.txt"; tail -n 10 "$out/validate.stderr.txt"

# GPU-side figures of the model measured here, last, with what is left of the budget (each skipped with less than
# LAST_MIN_S, default 20 s):
# fused attention's throughput per SDPA backend (FlashAttention-2, cuDNN, memory-efficient) at the published
# benchmarks' shapes (src/sim/workload/attentionKernels.ts); the torch fallback of Megatron's scale-mask-softmax
# against the bytes megatronOps.ts charges for it; whole Llama layers as eager PyTorch runs them (eagerOps.ts).
measure_last() {  # name, cap in s, script; writes $out/<name>.json
  local name=$1 limit
  limit=$(cap "$2" $(( $(left) - 3 )))
  echo "== $name"
  if (( limit < ${LAST_MIN_S:-20} )); then echo "only $(left) s left of RUN_BUDGET_S: $name not measured"; return; fi
  if stop_after "$limit" python3 "$3" --device cuda --out "$out/$name.json" \
    >"$out/$name.txt" 2>"$out/$name.stderr.txt"; then
    cat "$out/$name.txt"
  else
    echo "$name measurement failed:"; tail -n 20 "$out/$name.stderr.txt"
  fi
}
measure_last attention 90 scripts/measure-attention.py
measure_last softmax-fallback 60 scripts/measure-softmax-fallback.py
measure_last llama-layer 120 scripts/measure-llama-layer.py
