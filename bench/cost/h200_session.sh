#!/usr/bin/env bash
# The cost model's and the cake tool's GPU work on the H200, from binaries prebuilt on the development
# machine in build-h200/ (carried with the call, with build-h200/cake-cache holding the JIT cache and the
# compiled test schedules):
#   cmake --build build-h200 --target cake_cli cake_cost_calibrate cake_cost_sweep
#   CAKE_CACHE_DIR=$PWD/build-h200/cake-cache ./build-h200/bench/cake_cost_calibrate --precompile
#   CAKE_CACHE_DIR=$PWD/build-h200/cake-cache ./build-h200/bench/cake_cost_sweep --precompile
#   for f in gemm_sm90 corpus gpu_failures; do CAKE_CACHE_DIR=$PWD/build-h200/cake-cache ./build-h200/tools/cake check tests/cli/$f.cpp; done
# and for the evolve step, the search's CPU gates (analyzer, estimates, NVRTC; exits 77 without a GPU) into
# a log the device resumes (docs/evolve.md), so that the H200 spends its time on the run and bench gates:
#   CAKE_CACHE_DIR=$PWD/build-h200/cake-cache ./build-h200/tools/cake evolve tests/cli/gemm_sm90_family.cpp --family gemm_bf16 \
#     --shape M=4096,N=4096,K=4096 --log build-h200/evolve_gemm_4096.jsonl
# Steps (default: calibrate sweep cli; evolve only when named). Results land in $OUT.
#   bash bench/cost/h200_session.sh [steps...] [-- calibrate options]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT=${OUT:-/tmp/cake-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/build-h200/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}"
# A writable copy of the carried cache.
rm -rf /tmp/cake-cache && cp -r build-h200/cake-cache /tmp/cake-cache 2>/dev/null || mkdir -p /tmp/cake-cache
export CAKE_CACHE_DIR=/tmp/cake-cache
B=build-h200
DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
steps=()
cal_args=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; cal_args=("$@"); break; fi
  steps+=("$1"); shift
done
[ ${#steps[@]} -eq 0 ] && steps=(calibrate sweep cli)
for s in "${steps[@]}"; do
  echo "######## $s"
  case $s in
    calibrate)
      timeout 120 $B/bench/cake_cost_calibrate --driver "$DRIVER" --json "$OUT/cost_calibration_raw.json" "${cal_args[@]}" > "$OUT/calibrate.log" 2>&1
      echo "rc=$?"; grep -E "^(hbm|max active)|TIMED|error" "$OUT/calibrate.log" | head -20 ;;
    sweep)
      timeout 150 $B/bench/cake_cost_sweep --driver "$DRIVER" --json "$OUT/cost_sweep.json" --tsv "$OUT/cost_sweep_measured.tsv" > "$OUT/sweep.log" 2>&1
      echo "rc=$?"; grep -E "spearman|validation|WRONG|error" "$OUT/sweep.log" ;;
    cli)
      # The three commands an agent uses, on the GPU: run (correctness), bench (timing vs the peer), and
      # the failure paths (a hang, a store past N, a kernel without a reference), each as JSON.
      n=0
      for args in "run tests/cli/gemm_sm90.cpp" "bench tests/cli/gemm_sm90.cpp" "run tests/cli/corpus.cpp" "run tests/cli/gpu_failures.cpp --force"; do
        n=$((n + 1))
        timeout 120 $B/tools/cake $args --timeout 60 --json > /tmp/cli_$n.json 2>> "$OUT/cli.err"
        echo "cake $args -> rc=$?"
        cat /tmp/cli_$n.json >> "$OUT/cli.jsonl"
        python3 - /tmp/cli_$n.json <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("  (no JSON: %s)" % e); sys.exit()
for k in d.get("kernels", []):
    r = k.get("run") or k.get("bench") or {}
    print("  %-14s %-10s %s" % (k["name"], r.get("status"), (r.get("cause") or "")[:150]))
    for s in r.get("shapes", []):
        extra = " cake %.4f ms %s %.4f ms ratio %.3f" % (s["cake_ms"], s["peer"], s["peer_ms"], s["ratio"]) if "cake_ms" in s else ""
        print("     %s ok=%s rel_err=%s%s %s" % (s["shape"], s.get("ok"), s.get("rel_err"), extra, s.get("cause", "")))
    if r.get("hang"): print("     hang:", r["hang"])
EOF
      done ;;
    evolve)
      # The built-in search of the sm_90a bf16 GEMM family from its naive seed (1 stage, no multicast, not
      # persistent, direct store) at 4096^3, resuming the CPU gates carried in build-h200/ (docs/evolve.md).
      cp build-h200/evolve_gemm_4096.jsonl "$OUT/evolve_gemm_4096.jsonl" 2>/dev/null || true
      resume=""; [ -s "$OUT/evolve_gemm_4096.jsonl" ] && resume=--resume
      timeout 560 $B/tools/cake evolve tests/cli/gemm_sm90_family.cpp --family gemm_bf16 --shape M=4096,N=4096,K=4096 \
        --budget-gpu-s 300 --log "$OUT/evolve_gemm_4096.jsonl" $resume --json > "$OUT/evolve_gemm_4096.json" 2> "$OUT/evolve.err"
      echo "rc=$?"; tail -n 40 "$OUT/evolve.err"
      python3 - "$OUT/evolve_gemm_4096.json" <<'EOF'
import json, sys
try:
    e = json.load(open(sys.argv[1]))["evolve"]
except Exception as x:
    print("  (no JSON: %s)" % x); sys.exit()
print("  counts:", json.dumps(e["counts"]), " gpu_s %.1f of %s" % (e["gpu_s"], e["budget_gpu_s"]))
for b in e["best"]:
    print("  %s: best %s cake_ms %s ratio %s (seed %s: %s ms)" % (b["shape"], b.get("candidate"), b.get("cake_ms"), b.get("ratio"), b["seed"]["candidate"], b["seed"]["cake_ms"]))
EOF
      ;;
  esac
done
