#!/usr/bin/env bash
# One device call's worth of work on the H200, from binaries prebuilt on the development machine in
# build-h200/ (carried with the call; built with -DCAKE_BENCH_HOST_OPT= empty, see the check below): GPU tests, the
# demo (correctness + timing vs cuBLAS) and the prototype GEMM. Each step has its own time limit; logs go to $OUT. Steps that build the Python package
# (python_package below: attention, decode, prefilld256, pytests, ...) need .whl/ (the pinned build wheels,
# git-ignored) carried with the call next to build-h200/.
#   bash bench/h200/session.sh [steps...]   steps: savecache info gputests demo pybuild bench jit sanitize proto compute coop probe alltests sanitize2 sanitize3 sanitize4 norm normsweep variants epilogue heldout kmeans knn knnsweep knnsan ivf ivfsan attention decode pytests skipcheck kmeanssan sancorpus griddep sanprobe gemmsweep gemmscore prefillvariants prefillcausalw3 prefillcausallong decodefused decodeoneslice decodefp8 decodefp8py decodecluster decodeclustersan decodeb1ncu evolve4096 prefilltail gemmoverlaptests gemmoverlapbench prefilld256 prefilllookahead prefillserpentine prefillfma prefillncu decodesweep decodelayout decodeprobe decodegap decodegap2 gemvprobe decodefusedncu decodebarriers decodectas gemvgap gemvpromo gemvsmall gemmcand decodeab decodehost attn80 prefillsan kmeansdet kmeanssorted splitksweep skscatter skglobal skglobalsweep gemmclock gemmscoreab kladder peerkernels skfence resweep clusterexit widefill skexit midwidth splitkreread kgroup kgroupncu worstalts
set -uo pipefail
shopt -s nullglob  # .whl/peers/*.whl may be empty: pass nothing, not the pattern
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT=${OUT:-/tmp/cake-out}
mkdir -p "$OUT"
# build-h200/lib: shared libraries the binaries were linked against here that the device lacks, carried with them
# (Google Benchmark under Debian's soname: cp /lib/x86_64-linux-gnu/libbenchmark.so.1debian build-h200/lib/)
export LD_LIBRARY_PATH="$PWD/build-h200/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}"
export CAKE_CACHE_DIR=${CAKE_CACHE_DIR:-/tmp/cake-cache}
B=build-h200
# The GEMM GPU test's plan cases (hang trap on), both types: $1 picks them (default: the dispatch table's
# plans; "*other sweep candidate*persistent*" and "*128-row split-K*" the sweep's others: each case, its JIT
# included, fits one device call, the three together do not)
gemm_candidates_test() {
  local tc=${1:-"*every dispatch-table plan*"} log
  log="$OUT/test_gemm_candidates_$(echo "$tc" | tr -c 'a-z0-9' '_' | cut -c1-40).log"
  CAKE_HANG_TIMEOUT_MS=5000 timeout ${CAKE_CAND_TIMEOUT:-280} $B/tests/gpu/cake_gpu_test_gemm -tc="$tc" > "$log" 2>&1; echo "candidates ($tc) rc=$?"
  grep -E "ERROR|test cases|assertions|waited past|plans" "$log" | head -n 8 | cut -c1-200
}
# cake::gemm's candidates against the peer (cake_bench_gemm_sweep --shape, one process each) on seven M <= 16
# shapes of the domain; $1 names the files (the caller's environment, e.g. CAKE_TMA_L2_PROMOTION, applies)
small_m_sweeps() {
  local driver sh
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
  for sh in 1,8192,28672 8,8192,28672 1,4096,4096 8,4096,14336 8,2112,7168 8,57344,8192 16,7168,16384; do
    timeout 100 $B/bench/cake_bench_gemm_sweep --driver "$driver" --dtype bf16 --shape $sh --json "$OUT/${1}_${sh//,/_}.json" > "$OUT/${1}_${sh//,/_}.log" 2>&1; echo "$1 $sh rc=$?"
    grep -E "^  bf16|error" "$OUT/${1}_${sh//,/_}.log" | cut -c1-300
  done
}
# Per cake_bench_gemm_sweep JSON of the pattern $1: the peer's time and the $2 fastest rows (plan, ms, peer / cake),
# then every other row whose plan matches the regex $3 (if given)
sweep_summary() {
  python3 - "$1" "$2" "${3:-}" <<'PY'
import glob, json, re, sys
for f in sorted(glob.glob(sys.argv[1])):
    rows = sorted([r for r in json.load(open(f))["rows"] if r.get("ms")], key=lambda r: r["ms"])
    top = int(sys.argv[2])
    more = [r for r in rows[top:] if sys.argv[3] and re.search(sys.argv[3], r["plan"])]
    print(f.split("/")[-1], "peer %.4f" % rows[0]["peer_ms"])
    for r in rows[:top] + more:
        print("  %-28s %.4f ms  peer/cake %.3f%s" % (r["plan"], r["ms"], r["peer_ms"] / r["ms"], "" if r["ok"] else "  WRONG"))
PY
}
# the build backend's wheels (.whl/) and the peers' (.whl/peers/, only where a step times one: attention's peer
# comes with PyTorch), into /tmp/bt
# (an array, not $(ls ...): with nullglob an absent .whl/peers made `ls` list the working directory for pip)
install_wheels() { local w=(.whl/*.whl .whl/peers/*.whl); pip install -q --no-index --no-deps --target /tmp/bt "${w[@]}" > "$OUT/pip.log" 2>&1; }
# The Python package in /tmp/cp (and its build wheels, with the peers', in /tmp/bt), built from .whl/ unless an
# earlier step of this call built it
python_package() {
  [ -d /tmp/cp/cake ] && return 0
  install_wheels
  PYTHONPATH=/tmp/bt timeout 130 python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/cp --config-settings=build-dir=/tmp/pyb . >> "$OUT/pip.log" 2>&1; echo "pip rc=$?"
}
# The JIT cache of an earlier call (step savecache writes it to $OUT; copied to build-h200/ here and
# carried, it spares the next call the NVRTC builds: the cache key covers source, flags, target and NVRTC version)
# (in parts of 15 MB, jitcache.tgz.00, .01, ...: a file back from a call is at most 16 MB)
# (an array: under nullglob an `ls` of a pattern that matches nothing lists the working directory and succeeds)
jitparts=($B/jitcache.tgz.*)
if [ ${#jitparts[@]} -gt 0 ]; then mkdir -p "$CAKE_CACHE_DIR" && { cat "${jitparts[@]}" | tar xz -C "$CAKE_CACHE_DIR" && echo "jit cache restored: $(ls "$CAKE_CACHE_DIR" | wc -l) entries" || echo "jit cache parts in $B unreadable: not used"; }; fi
# Benchmarks (and the demo) built by scripts/test.sh where no GPU is present have their host code at -O0
# (CAKE_BENCH_HOST_OPT, the top CMakeLists.txt): the binaries carried here must come from a build configured with
# -DCAKE_BENCH_HOST_OPT= (empty)
for f in $B/bench/*; do
  grep -q "CAKE_BENCH_HOST_OPT, which" "$f" 2>/dev/null && echo "WARNING: $f was built with CAKE_BENCH_HOST_OPT (host code not optimized): rebuild it with -DCAKE_BENCH_HOST_OPT= before timing"
done
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(info gputests demo proto)
for s in "${steps[@]}"; do
  echo "######## $s"
  case $s in
    savecache) tar cz -C "$CAKE_CACHE_DIR" . | split -b 15m -d - "$OUT/jitcache.tgz." && ls -la "$OUT"/jitcache.tgz.* ;;
    info) nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv ;;
    gputests)
      for t in $B/tests/gpu/cake_gpu_*; do
        echo "== $t"; timeout ${CAKE_GPUTEST_TIMEOUT:-120} "$t" > "$OUT/$(basename "$t").log" 2>&1; echo "rc=$?"
        grep -E "ERROR|waited past|test cases|assertions" "$OUT/$(basename "$t").log" | head -n 8
      done ;;
    demo) timeout 240 $B/tools/cake_demo --runs 100 > "$OUT/demo.log" 2>&1; echo "rc=$?"; sed -n '/^== lowered/,$p' "$OUT/demo.log" | tail -n 40 ;;
    proto) CAKE_PROTO_PREBUILT=1 CAKE_PROTO_BUILD=$B/proto timeout 330 bash bench/proto/run_on_h200.sh 2>&1 | tail -n 70 ;;
    bench)
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      timeout 400 $B/bench/cake_bench_gemm --runs 200 --driver "$DRIVER" --json "$OUT/gemm.json" > "$OUT/bench.log" 2>&1; echo "rc=$?"
      grep -E "^gemm_|error" "$OUT/bench.log" | cut -c1-160 ;;
    gemmsweep)
      # cake::gemm's dispatcher evidence (docs/gemm.md, "The dispatcher"): the domain's search shapes x candidates
      # and the peer; the JSON is rewritten after every shape ("complete": false until the end)
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      timeout ${CAKE_SWEEP_TIMEOUT:-560} $B/bench/cake_bench_gemm_sweep --driver "$DRIVER" --json "$OUT/gemm_sweep.json" ${CAKE_SWEEP_ARGS:-} > "$OUT/gemm_sweep.log" 2>&1; echo "rc=$?"
      grep -E "estimated|measured in|WRONG|no peer|error" "$OUT/gemm_sweep.log" | cut -c1-200 | head -n 40 ;;
    splitksweep)
      # split-K's e4m3 form and the few-tile split-K candidates: the GPU test of the table's plans (both types,
      # hang trap on; the sweep's other schedules: step gemmcand), then the sweep of the shapes whose candidates include split-K
      # (e4m3: every such shape; bf16: M >= 256, the ones whose candidates changed) into two files for
      # tools/gen/merge_sweeps.py
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      gemm_candidates_test  # (the table's plans; the sweep's other schedules: step gemmcand with CAKE_CAND_CASES)
      timeout 200 $B/bench/cake_bench_gemm_sweep --driver "$DRIVER" --dtype e4m3 --splitk-only --json "$OUT/gemm_sweep_e4m3_splitk.json" > "$OUT/sweep_e4m3.log" 2>&1; echo "e4m3 rc=$?"
      grep -E "estimated|measured in|WRONG|error" "$OUT/sweep_e4m3.log" | cut -c1-200 | head -n 10
      timeout 120 $B/bench/cake_bench_gemm_sweep --driver "$DRIVER" --dtype bf16 --splitk-only --min-m 256 --json "$OUT/gemm_sweep_bf16_splitk.json" > "$OUT/sweep_bf16.log" 2>&1; echo "bf16 rc=$?"
      grep -E "estimated|measured in|WRONG|error" "$OUT/sweep_bf16.log" | cut -c1-200 | head -n 10 ;;
    skscatter)
      # the reduce-scatter split-K (cluster_sum_scatter) and the fill-the-SMs split-K candidates: GPU tests
      # (the table's plans, the cluster all-reduce, the split-K schedule), memcheck of the last two, then
      # the sweep of the shapes whose candidates include split-K, both types, into two files for
      # tools/gen/merge_sweeps.py
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      gemm_candidates_test  # (the table's plans; the sweep's other schedules: step gemmcand with CAKE_CAND_CASES)
      CAKE_HANG_TIMEOUT_MS=5000 timeout 100 $B/tests/gpu/cake_gpu_test_compute -tc="cluster_sum*,split-K*" > "$OUT/test_cluster.log" 2>&1; echo "cluster rc=$?"
      grep -E "ERROR|test cases|assertions|waited past" "$OUT/test_cluster.log" | head -n 8 | cut -c1-200
      for tool in memcheck racecheck; do
        CAKE_SMALL_SHAPES=1 timeout 150 compute-sanitizer --tool $tool $B/tests/gpu/cake_gpu_test_compute -tc="cluster_sum*,split-K*" > "$OUT/san_cluster_$tool.log" 2>&1; echo "$tool rc=$?"
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases" "$OUT/san_cluster_$tool.log" | head -n 4
      done
      timeout 200 $B/bench/cake_bench_gemm_sweep --driver "$DRIVER" --splitk-only --max-m 128 --json "$OUT/gemm_sweep_splitk_small.json" > "$OUT/sweep_small.log" 2>&1; echo "small rc=$?"
      grep -E "estimated|measured in|WRONG|error" "$OUT/sweep_small.log" | cut -c1-200 | head -n 10
      timeout 100 $B/bench/cake_bench_gemm_sweep --driver "$DRIVER" --splitk-only --min-m 129 --json "$OUT/gemm_sweep_splitk_few.json" > "$OUT/sweep_few.log" 2>&1; echo "few rc=$?"
      grep -E "estimated|measured in|WRONG|error" "$OUT/sweep_few.log" | cut -c1-200 | head -n 10 ;;
    gemmscoreab)
      # the dispatch table whose buckets between searched M the cost model picks (2026-12-05) against the wave
      # rule's table before it: cake_bench_gemm_score_oldtable (built from the old header, carried) and the new
      # binary, alternating, two processes each, on the held-out (type, shape) pairs whose plan changed
      # ($B/score_changed_shapes.txt, carried). The old-table binary, here: python3 tools/gen/gemm_dispatch.py
      # bench/results/h200/gemm_sweep.json --wave-rule; cmake --build build-h200 --target cake_bench_gemm_score; cp
      # build-h200/bench/cake_bench_gemm_score build-h200/bench/cake_bench_gemm_score_oldtable; git checkout
      # include/cake/gemm_dispatch.hpp; build again. The pairs: the held-out (type, M, N, K) whose plan differs, from
      # `diff <(OLD --list-plans) <(NEW --list-plans) | sed -n 's/^> //p' | cut -d' ' -f1-4` (no GPU; the old binary
      # must have --list-plans, 2026-12-05 on).
      # Also one binary under two settings, or any two builds: CAKE_AB_OLD_BIN (the "old" binary), CAKE_AB_OLD_ENV (its
      # environment, e.g. CAKE_CLUSTER_EXIT=barrier), CAKE_AB_ONLY (the pairs to time, default score_changed_shapes.txt;
      # the cluster-exit A/B of 2026-12-06 timed bench/results/h100/gemm_score_exit_ab_pairs.txt)
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      # (CAKE_AB_ROUNDS rounds, 2 by default; the logs stay on the machine but for their WRONG / error lines)
      for r in $(seq 1 ${CAKE_AB_ROUNDS:-2}); do for t in oldtable new; do
        bin=$B/bench/cake_bench_gemm_score; envs=; [ $t = oldtable ] && { bin=${CAKE_AB_OLD_BIN:-$B/bench/cake_bench_gemm_score_oldtable}; envs=${CAKE_AB_OLD_ENV:-}; }
        env $envs timeout ${CAKE_AB_TIMEOUT:-150} $bin --driver "$DRIVER" --only ${CAKE_AB_ONLY:-$B/score_changed_shapes.txt} --json "$OUT/ab_${t}_$r.json" > "/tmp/ab_${t}_$r.log" 2>&1; echo "$t $r rc=$?"
        grep -E "WRONG|no peer|error" "/tmp/ab_${t}_$r.log" | cut -c1-200 | head -n 10
      done; done ;;
    gemmscore)
      # the held-out shapes through cake::gemm (dispatcher included) against the peer
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      timeout ${CAKE_SCORE_TIMEOUT:-560} $B/bench/cake_bench_gemm_score --driver "$DRIVER" --json "$OUT/gemm_score.json" ${CAKE_SCORE_ARGS:-} > "$OUT/gemm_score.log" 2>&1; echo "rc=$?"
      grep -E "WRONG|no peer|error|geometric|evidence" "$OUT/gemm_score.log" | cut -c1-200 | head -n 40 ;;
    jit) CAKE_CACHE_DIR=/tmp/cake-jit-bench timeout 120 $B/bench/cake_bench_jit 2>&1 | tail -n 6 ;;
    compute)
      # every test case in its own process, with the hang trap on: a hang or a trap fails that case only
      export CAKE_HANG_TIMEOUT_MS=${CAKE_HANG_TIMEOUT_MS:-3000}
      for t in compute gemm norm; do
        [ -x $B/tests/gpu/cake_gpu_test_$t ] || continue
        $B/tests/gpu/cake_gpu_test_$t --list-test-cases 2>/dev/null | sed -n '/^====/,/^====/p' | grep -v '^====' | grep -v '^\[doctest\]' | while read -r tc; do
          [ -n "$tc" ] || continue
          res=$(timeout 120 $B/tests/gpu/cake_gpu_test_$t -tc="${tc//,/\\,}" 2>&1 | tee -a "$OUT/test_$t.log" | grep -E "test cases|waited past|ERROR" | head -n 3 | tr '\n' ' ')
          echo "$t | $tc | ${res:-TIMEOUT}" | cut -c1-220
        done
      done ;;
    variants)
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      timeout ${CAKE_VARIANTS_TIMEOUT:-500} $B/bench/cake_bench_gemm --runs ${CAKE_VARIANTS_RUNS:-100} --no-fp8 --variants ${CAKE_VARIANTS:-chosen,coop1,pp128,pp128_f0,pp64} --driver "$DRIVER" \
        --json "$OUT/gemm_variants.json" > "$OUT/variants.log" 2>&1; echo "rc=$?"
      grep -E "^gemm_|error" "$OUT/variants.log" | cut -c1-150 ;;
    coop)
      CAKE_HANG_TIMEOUT_MS=3000 timeout 90 $B/tests/gpu/cake_gpu_test_compute -tc="mainloop: cooperative*" > "$OUT/coop.log" 2>&1
      grep -E "MESSAGE|waited past|test cases" "$OUT/coop.log" | head -n 12 ;;
    probe)
      # one process per configuration (a trap ends the process): "M N K bm bn pingpong in_flight direct"
      while read -r spec; do
        [ -n "$spec" ] || continue
        res=$(CAKE_MAINLOOP="$spec" CAKE_HANG_TIMEOUT_MS=2000 timeout 40 $B/tests/gpu/cake_gpu_test_compute -tc="mainloop: the shape in CAKE_MAINLOOP" 2>&1 | grep -E "rel_err|waited past" | head -n 2 | tr '\n' ' ')
        echo "$spec | ${res:-TIMEOUT}" | cut -c1-200
      done < "${CAKE_PROBE_FILE:-bench/h200/probe.txt}" ;;
    alltests)
      # every GPU test case in its own process, with the hang trap on
      export CAKE_HANG_TIMEOUT_MS=${CAKE_HANG_TIMEOUT_MS:-3000}
      for t in $B/tests/gpu/cake_gpu_*; do
        name=$(basename "$t")
        "$t" --list-test-cases 2>/dev/null | sed -n '/^====/,/^====/p' | grep -v '^====' | grep -v '^\[doctest\]' | while read -r tc; do
          [ -n "$tc" ] || continue
          case "$tc" in *CAKE_MAINLOOP*) continue ;; esac
          res=$(timeout 150 "$t" -tc="${tc//,/\\,}" 2>&1 | tee -a "$OUT/tests.log" | grep -E "test cases|waited past|ERROR" | head -n 2 | tr '\n' ' ')
          echo "$name | $tc | ${res:-TIMEOUT}" | cut -c1-200
        done
      done ;;
    sanitize4)
      # the split-K cluster reduction (DSMEM), memcheck + racecheck
      for tool in memcheck racecheck; do
        for tc in "split-K*"; do
          res=$(CAKE_SMALL_SHAPES=1 timeout ${CAKE_SANITIZE_TIMEOUT:-100} compute-sanitizer --tool $tool --print-limit 3 $B/tests/gpu/cake_gpu_test_compute -tc="$tc" 2>&1 | tee -a "$OUT/sanitize4.log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases" | tr '\n' ' ')
          echo "$tool | $tc | ${res:-TIMEOUT}" | cut -c1-200
        done
      done ;;
    sanitize3)
      for tool in memcheck racecheck synccheck; do
        for spec in "cake_gpu_test_compute|split-K*" "cake_gpu_test_compute|cake::gemm fused*" "cake_gpu_test_norm|*"; do
          bin=${spec%%|*}; tc=${spec#*|}
          res=$(timeout 120 compute-sanitizer --tool $tool --print-limit 3 $B/tests/gpu/$bin -tc="$tc" 2>&1 | tee -a "$OUT/sanitize3.log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases" | tr '\n' ' ')
          echo "$tool | $bin $tc | ${res:-TIMEOUT}" | cut -c1-200
        done
      done ;;
    normsweep)
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      timeout ${CAKE_SWEEP_TIMEOUT:-150} $B/bench/cake_bench_norm --sweep --runs ${CAKE_SWEEP_RUNS:-60} --benchmark_filter=NONE --driver "$DRIVER" --json "$OUT/norm_sweep.json" > "$OUT/norm_sweep.log" 2>&1; echo "rc=$?"
      tail -n 5 "$OUT/norm_sweep.log" | cut -c1-150 ;;
    sanitize2)
      for tool in memcheck racecheck synccheck; do
        for tc in "one-head attention*" "k-means*" "scatter-add*" "mainloop: ping-pong 128x128, in flight"; do
          res=$(timeout 150 compute-sanitizer --tool $tool --print-limit 3 $B/tests/gpu/cake_gpu_test_compute -tc="$tc" 2>&1 | tee -a "$OUT/sanitize2.log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases" | tr '\n' ' ')
          echo "$tool | $tc | ${res:-TIMEOUT}" | cut -c1-200
        done
      done ;;
    norm)
      CAKE_HANG_TIMEOUT_MS=3000 timeout 150 $B/tests/gpu/cake_gpu_test_norm > "$OUT/test_norm.log" 2>&1; echo "rc=$?"
      grep -E "ERROR|test cases|waited past" "$OUT/test_norm.log" | head -n 12
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      timeout 150 $B/bench/cake_bench_norm --runs ${CAKE_NORM_RUNS:-100} --driver "$DRIVER" --json "$OUT/norm.json" > "$OUT/bench_norm.log" 2>&1; echo "rc=$?"
      grep -E "^(softmax|rmsnorm|copy)|error" "$OUT/bench_norm.log" | cut -c1-150 | head -n 40 ;;
    gemmlookahead)
      # the GEMM's lookahead (the next tile's first K block issued before this tile's stores): its GPU test cases
      # (hang trap on), then cake::gemm's choice with and without it on the six bf16 shapes (tuned) and the held-out
      # ones, 200 runs, alternating rounds with cuBLAS (cake_bench_gemm --variants chosen,la)
      CAKE_HANG_TIMEOUT_MS=5000 timeout 150 $B/tests/gpu/cake_gpu_test_gemm -tc="*lookahead*" > "$OUT/test_gemm_lookahead.log" 2>&1; echo "gemm test rc=$?"
      grep -E "ERROR|test cases|assertions|waited past|SKIPPED" "$OUT/test_gemm_lookahead.log" | head -n 8
      CAKE_HANG_TIMEOUT_MS=5000 timeout 150 $B/tests/gpu/cake_gpu_test_compute -tc="*lookahead*,cake::gemm fused epilogues*" > "$OUT/test_compute_lookahead.log" 2>&1; echo "compute test rc=$?"
      grep -E "ERROR|test cases|assertions|waited past|SKIPPED" "$OUT/test_compute_lookahead.log" | head -n 8
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      for set in "" --held-out; do
        timeout ${CAKE_VARIANTS_TIMEOUT:-150} $B/bench/cake_bench_gemm --runs ${CAKE_VARIANTS_RUNS:-200} --no-fp8 $set --variants chosen,la --driver "$DRIVER" \
          --json "$OUT/gemm_lookahead${set:+_heldout}.json" > "$OUT/lookahead${set:+_heldout}.log" 2>&1; echo "bench $set rc=$?"
        grep -E "^gemm_|error" "$OUT/lookahead${set:+_heldout}.log" | cut -c1-150
      done ;;
    decodefused)
      # decode's fused combine (the last slice to arrive combines the others; no combine kernel): its GPU test case
      # (hang trap on), then each grid shape's schedule with and without it (cake_bench_decode --fused-combine: the
      # schedule, fused, the schedule again)
      CAKE_HANG_TIMEOUT_MS=5000 timeout 200 $B/tests/gpu/cake_gpu_test_attention_decode -tc="*fused_combine*" > "$OUT/test_decode_fused.log" 2>&1; echo "decode test rc=$?"
      grep -E "ERROR|test cases|assertions|waited past|SKIPPED" "$OUT/test_decode_fused.log" | head -n 8
      timeout ${CAKE_DECODE_TIMEOUT:-200} $B/bench/cake_bench_decode --runs ${CAKE_DECODE_RUNS:-30} --fused-combine --json "$OUT/decode_fused.json" > "$OUT/decode_fused.log" 2>&1; echo "bench rc=$?"
      grep -E "^decode" "$OUT/decode_fused.log" | cut -c1-120 ;;
    decodeoneslice)
      # the split rule against one slice with the fused combine (64- and 128-key blocks, 3 stages) on the decode grid:
      # per shape the chosen schedule, the two one-slice forms, the chosen schedule again (cake_bench_decode --one-slice)
      timeout ${CAKE_DECODE_TIMEOUT:-150} $B/bench/cake_bench_decode --runs ${CAKE_DECODE_RUNS:-30} --one-slice --json "$OUT/decode_one_slice.json" > "$OUT/decode_one_slice.log" 2>&1; echo "bench rc=$?"
      grep -E "^decode" "$OUT/decode_one_slice.log" | cut -c1-120 ;;
    decodefp8)
      # fp8 (e4m3) KV caches: the 8-bit register tiles' conversions bit for bit (sm_90a and sm_80 code), the decode GPU
      # test's fp8 cases and the bf16 ones (hang trap on), then per grid shape bf16, fp8 at the rule's schedule, at the
      # other key block, in 2 and 4 stages and as the loads-only probe, bf16 again (cake_bench_decode --fp8)
      CAKE_HANG_TIMEOUT_MS=5000 timeout ${CAKE_COMPUTE_TIMEOUT:-120} $B/tests/gpu/cake_gpu_test_compute -tc="*8-bit float*" > "$OUT/test_fp8_tiles.log" 2>&1; echo "fp8 tiles test rc=$?"
      grep -E "ERROR|test cases|assertions|wrong|SKIPPED" "$OUT/test_fp8_tiles.log" | head -n 8 | cut -c1-220
      CAKE_HANG_TIMEOUT_MS=5000 timeout ${CAKE_DECODE_TEST_TIMEOUT:-240} $B/tests/gpu/cake_gpu_test_attention_decode > "$OUT/test_decode_fp8.log" 2>&1; echo "decode test rc=$?"
      grep -E "ERROR|test cases|assertions|waited past|SKIPPED" "$OUT/test_decode_fp8.log" | head -n 8 | cut -c1-220
      grep -E "^.*fp8 lens" "$OUT/test_decode_fp8.log" | head -n 12 | cut -c1-200
      res=$(timeout ${CAKE_SAN_TIMEOUT:-150} compute-sanitizer --tool memcheck --print-limit 3 $B/tests/gpu/cake_gpu_test_attention_decode -tc="*fp8*" 2>&1 | grep -E "ERROR SUMMARY|test cases" | tr '\n' ' ')
      echo "memcheck fp8 | ${res:-TIMEOUT}"
      timeout ${CAKE_DECODE_TIMEOUT:-200} $B/bench/cake_bench_decode --runs ${CAKE_DECODE_RUNS:-30} --fp8 --json "$OUT/decode_fp8.json" > "$OUT/decode_fp8.log" 2>&1; echo "bench rc=$?"
      grep -E "^decode" "$OUT/decode_fp8.log" | cut -c1-120 ;;
    decodefp8py)
      # the Python package, then the decode bench against SDPA with the fp8 caches beside (bench_peers.py --decode-fp8)
      python_package
      PYTHONPATH=/tmp/cp:/tmp/bt timeout ${CAKE_DECODE_TIMEOUT:-300} python3 bench/peers/bench_peers.py --family attention_decode --runs ${CAKE_DECODE_RUNS:-10} --decode-fp8 --json "$OUT/attention_decode_fp8.json" > "$OUT/attention_decode_fp8.log" 2>&1; echo "bench rc=$?"
      grep -E "^attention decode|geomean|Error" "$OUT/attention_decode_fp8.log" | cut -c1-260 ;;
    decodecluster)
      # cluster_combine (a request's slices one cluster, merged in distributed shared memory; no combine kernel): the
      # GPU test's cases (hang trap on), then per grid shape of 2..16 slices the chosen schedule, it with
      # cluster_combine (8 slices where it has 16; also in 2 stages where 3 lose the second CTA per SM), it again
      CAKE_HANG_TIMEOUT_MS=5000 timeout ${CAKE_DECODE_TEST_TIMEOUT:-200} $B/tests/gpu/cake_gpu_test_attention_decode -tc="*cluster_combine*" > "$OUT/test_decode_cluster.log" 2>&1; echo "decode test rc=$?"
      grep -E "ERROR|test cases|assertions|waited past|SKIPPED" "$OUT/test_decode_cluster.log" | head -n 8
      timeout ${CAKE_DECODE_TIMEOUT:-200} $B/bench/cake_bench_decode --runs ${CAKE_DECODE_RUNS:-30} --cluster-combine ${CAKE_DECODE_ARGS:-} --json "$OUT/decode_cluster.json" > "$OUT/decode_cluster.log" 2>&1; echo "bench rc=$?"
      grep -E "^decode" "$OUT/decode_cluster.log" | cut -c1-120 ;;
    decodeclustersan)
      # compute-sanitizer (memcheck, racecheck, synccheck) on the GPU test's cluster_combine cases: the DSMEM
      # reductions' scratch and barriers, the scattered column-block stores
      for tool in memcheck racecheck synccheck; do
        res=$(timeout ${CAKE_SAN_TIMEOUT:-150} compute-sanitizer --tool $tool --print-limit 3 $B/tests/gpu/cake_gpu_test_attention_decode -tc="*cluster_combine*" 2>&1 | tee -a "$OUT/decodeclustersan.log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases" | tr '\n' ' ')
        echo "$tool: $res"
      done ;;
    decodeb1ncu)
      # decode's worst row (B 1, 1k keys) under ncu: Cake's decode and combine kernels (after two warm-up calls), then
      # the peer's kernels (PyTorch SDPA, default backend choice, on contiguous K/V; bench/h200/sdpa_decode_probe.py)
      S="--section LaunchStats --section SpeedOfLight --section Occupancy"
      timeout 120 ncu $S -k regex:'attn_dec' --launch-skip 4 --launch-count 2 $B/bench/cake_bench_decode --shape 1,1024 --runs 1 > "$OUT/decode_b1_ncu_cake.log" 2>&1; echo "ncu cake rc=$?"
      grep -E "^  [a-zA-Z_]*attn_dec|Duration|Grid Size|Block Size|Registers Per|Memory Throughput|Compute \(SM\) Throughput" "$OUT/decode_b1_ncu_cake.log" | cut -c1-120 | head -n 30
      timeout 120 ncu $S --launch-skip 0 --launch-count 12 python3 bench/h200/sdpa_decode_probe.py 1 1024 > "$OUT/decode_b1_ncu_sdpa.log" 2>&1; echo "ncu sdpa rc=$?"
      grep -E "^  [a-zA-Z_].*\(|Duration|Grid Size|Block Size|Registers Per|Memory Throughput" "$OUT/decode_b1_ncu_sdpa.log" | cut -c1-140 | head -n 60 ;;
    evolve4096)
      # issue 14's proof: cake evolve from the naive seed at 4096^3 (tests/cli/gemm_sm90_family.cpp), its CPU gates
      # taken from a carried log when there is one ($B/evolve_gemm_4096.jsonl.gz, written on the development machine by
      # `cake evolve tests/cli/gemm_sm90_family.cpp --family gemm_bf16 --shape M=4096,N=4096,K=4096 --log ...`), then the
      # GPU gates within CAKE_EVOLVE_GPU_S seconds (default 180); the log comes back gzipped
      if [ -f $B/evolve_gemm_4096.jsonl.gz ]; then gunzip -c $B/evolve_gemm_4096.jsonl.gz > "$OUT/evolve_gemm_4096.jsonl"; fi
      timeout ${CAKE_EVOLVE_TIMEOUT:-380} $B/tools/cake evolve tests/cli/gemm_sm90_family.cpp --family gemm_bf16 --shape M=4096,N=4096,K=4096 \
        --budget-gpu-s ${CAKE_EVOLVE_GPU_S:-180} --log "$OUT/evolve_gemm_4096.jsonl" $([ -s "$OUT/evolve_gemm_4096.jsonl" ] && echo --resume) --json \
        > "$OUT/evolve_gemm_4096.json" 2> "$OUT/evolve_gemm_4096.err"; echo "evolve rc=$?"
      tail -n 3 "$OUT/evolve_gemm_4096.err" | cut -c1-250
      python3 -c "import json,sys; e=json.load(open(sys.argv[1]))['evolve']; b=e['best'][0]; print(e['counts']); print(b['candidate'], b['cake_ms'], b['ratio'], e['gpu_s'])" "$OUT/evolve_gemm_4096.json"
      gzip -f "$OUT/evolve_gemm_4096.jsonl" ;;
    gemmoverlaptests)
      # the two ways of overlapping the GEMM's epilogue, correctness only (one device call): the lookahead's and
      # whole-tile staging's GPU test cases (hang trap on), then the fused epilogues and mainloops with the lookahead
      CAKE_HANG_TIMEOUT_MS=5000 timeout 280 $B/tests/gpu/cake_gpu_test_gemm -tc="*lookahead*,*whole-tile*" > "$OUT/test_gemm_overlap.log" 2>&1; echo "gemm test rc=$?"
      grep -E "ERROR|test cases|assertions|waited past|SKIPPED" "$OUT/test_gemm_overlap.log" | head -n 8
      CAKE_HANG_TIMEOUT_MS=5000 timeout 200 $B/tests/gpu/cake_gpu_test_compute -tc="*lookahead*,cake::gemm fused epilogues*" > "$OUT/test_compute_lookahead.log" 2>&1; echo "compute test rc=$?"
      grep -E "ERROR|test cases|assertions|waited past|SKIPPED" "$OUT/test_compute_lookahead.log" | head -n 8 ;;
    gemmoverlapbench)
      # cake::gemm's choice, with the lookahead, with whole-tile staging and with both, on the six bf16 shapes (tuned)
      # and the held-out ones, alternating rounds with cuBLAS (cake_bench_gemm --variants chosen,la,wt,la_wt)
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      for set in "" --held-out; do
        timeout ${CAKE_VARIANTS_TIMEOUT:-270} $B/bench/cake_bench_gemm --runs ${CAKE_VARIANTS_RUNS:-200} --no-fp8 $set --variants chosen,la,wt,la_wt --driver "$DRIVER" \
          --json "$OUT/gemm_overlap${set:+_heldout}.json" > "$OUT/overlap${set:+_heldout}.log" 2>&1; echo "bench $set rc=$?"
        grep -E "^gemm_|error" "$OUT/overlap${set:+_heldout}.log" | cut -c1-150
      done ;;
    epilogue)
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      timeout ${CAKE_EPILOGUE_TIMEOUT:-300} $B/bench/cake_bench_gemm --runs ${CAKE_EPILOGUE_RUNS:-200} --epilogue ${CAKE_EPILOGUE_VARIANTS:+--variants $CAKE_EPILOGUE_VARIANTS} --driver "$DRIVER" --json "$OUT/gemm_epilogue.json" > "$OUT/epilogue.log" 2>&1; echo "rc=$?"
      grep -E "^gemm_|error" "$OUT/epilogue.log" | cut -c1-150 ;;
    heldout)
      # the fused epilogue and the plain bf16 GEMM on held-out shapes (cake_bench_gemm --held-out)
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      timeout ${CAKE_HELDOUT_TIMEOUT:-200} $B/bench/cake_bench_gemm --runs ${CAKE_EPILOGUE_RUNS:-200} --held-out --epilogue --driver "$DRIVER" --json "$OUT/gemm_epilogue_heldout.json" > "$OUT/epilogue_heldout.log" 2>&1; echo "rc=$?"
      grep -E "^gemm_|error" "$OUT/epilogue_heldout.log" | cut -c1-150
      timeout ${CAKE_HELDOUT_TIMEOUT:-200} $B/bench/cake_bench_gemm --runs ${CAKE_EPILOGUE_RUNS:-200} --held-out --no-fp8 --driver "$DRIVER" --json "$OUT/gemm_heldout.json" > "$OUT/gemm_heldout.log" 2>&1; echo "rc=$?"
      grep -E "^gemm_|error" "$OUT/gemm_heldout.log" | cut -c1-150 ;;
    kmeans)
      # The k-means GPU test, then the Python package (built here from the pinned wheels in .whl/) and the
      # same-process bench against flash-kmeans (its wheel in .whl/peers/, installed without dependencies).
      CAKE_HANG_TIMEOUT_MS=5000 timeout 200 $B/tests/gpu/cake_gpu_test_kmeans > "$OUT/test_kmeans.log" 2>&1; echo "rc=$?"
      grep -E "ERROR|test cases|waited past|seed" "$OUT/test_kmeans.log" | head -n 12
      install_wheels
      PYTHONPATH=/tmp/bt python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/cp --config-settings=build-dir=/tmp/pyb . >> "$OUT/pip.log" 2>&1; echo "pip rc=$?"
      PYTHONPATH=/tmp/cp:/tmp/bt timeout ${CAKE_KMEANS_TIMEOUT:-420} python3 bench/peers/bench_peers.py --family kmeans --runs ${CAKE_KMEANS_RUNS:-50} --json "$OUT/kmeans.json" 2>&1 | tee "$OUT/bench_kmeans.log" | grep -vE "Warning|warn" | cut -c1-200 ;;
    knn)
      # The kNN GPU test (against a full host sort), then the Python package (as in the kmeans step) and the
      # same-process bench against chunked torch.matmul + torch.topk (issue 13's 4096 x 2^20 D128 k 10 / 100).
      CAKE_HANG_TIMEOUT_MS=5000 timeout ${CAKE_KNN_TEST_TIMEOUT:-200} $B/tests/gpu/cake_gpu_test_knn > "$OUT/test_knn.log" 2>&1; echo "rc=$?"
      grep -E "ERROR|test cases|waited past|seed|SKIPPED" "$OUT/test_knn.log" | head -n 12
      pip install -q --no-index --no-deps --target /tmp/bt .whl/*.whl > "$OUT/pip.log" 2>&1
      PYTHONPATH=/tmp/bt timeout 130 python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/cp --config-settings=build-dir=/tmp/pyb . >> "$OUT/pip.log" 2>&1; echo "pip rc=$?"
      PYTHONPATH=/tmp/cp:/tmp/bt timeout ${CAKE_KNN_TIMEOUT:-400} python3 bench/peers/bench_peers.py --family knn --runs ${CAKE_KNN_RUNS:-50} --json "$OUT/knn.json" 2>&1 | tee "$OUT/bench_knn.log" | grep -vE "Warning|warn" | cut -c1-220 ;;
    knnsweep)
      # the search schedules that fit, timed alone (to choose cake::knn::search_config_for)
      timeout ${CAKE_KNNSWEEP_TIMEOUT:-500} $B/bench/cake_bench_knn --sweep --runs ${CAKE_KNNSWEEP_RUNS:-10} --json "$OUT/knn_sweep.json" 2>&1 | tee "$OUT/knnsweep.log" | cut -c1-160 ;;
    attn80)
      # the sm_80 attention fallback (kernels/attention/prefill_sm80.hpp) as compute_80 PTX on Hopper: the f64
      # check with the hang trap on, then memcheck and racecheck on the same case
      tc="*the sm_80 fallback*"
      CAKE_HANG_TIMEOUT_MS=5000 timeout 150 $B/tests/gpu/cake_gpu_test_attention -tc="$tc" > "$OUT/attn80.log" 2>&1; echo "rc=$?"
      grep -E "ERROR|test cases|waited past|seed|sm_80:" "$OUT/attn80.log" | head -n 14
      for tool in memcheck racecheck; do
        res=$(timeout 200 compute-sanitizer --tool $tool --print-limit 3 $B/tests/gpu/cake_gpu_test_attention -tc="$tc" 2>&1 | tee -a "$OUT/attn80san.log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases" | tr '\n' ' ')
        echo "$tool | ${res:-TIMEOUT}" | cut -c1-200
      done ;;
    prefillsan)
      # compute-sanitizer memcheck and racecheck on the prefill test of the schedules the entry point picks
      tc="attention prefill matches an f64 reference*"
      for tool in memcheck racecheck; do
        res=$(timeout ${CAKE_SAN_TIMEOUT:-250} compute-sanitizer --tool $tool --print-limit 3 $B/tests/gpu/cake_gpu_test_attention -tc="$tc" 2>&1 | tee -a "$OUT/prefillsan.log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases" | tr '\n' ' ')
        echo "$tool | ${res:-TIMEOUT}" | cut -c1-200
      done ;;
    kmeansdet)
      # the k-means GPU test (the deterministic update among its cases), memcheck on the deterministic case,
      # then the update alone with f32-atomic and deterministic sums (what determinism costs)
      CAKE_HANG_TIMEOUT_MS=5000 timeout 200 $B/tests/gpu/cake_gpu_test_kmeans > "$OUT/test_kmeans.log" 2>&1; echo "rc=$?"
      grep -E "ERROR|test cases|waited past|not the nearest" "$OUT/test_kmeans.log" | head -n 12 | cut -c1-200
      res=$(timeout 150 compute-sanitizer --tool memcheck --print-limit 3 $B/tests/gpu/cake_gpu_test_kmeans -tc="*deterministic: the same bits*" 2>&1 | tee "$OUT/kmeansdet_san.log" | grep -E "ERROR SUMMARY|test cases" | tr '\n' ' ')
      echo "memcheck | ${res:-TIMEOUT}" | cut -c1-200
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      timeout 200 $B/bench/cake_bench_kmeans --update --runs ${CAKE_KMEANS_RUNS:-20} --driver "$DRIVER" --json "$OUT/kmeans_update.json" 2>&1 | tee "$OUT/bench_kmeans_update.log" | cut -c1-200 ;;
    knnsan)
      for tool in memcheck racecheck synccheck; do
        res=$(timeout 200 compute-sanitizer --tool $tool --print-limit 3 $B/tests/gpu/cake_gpu_test_knn -tc="*exact top-k*" 2>&1 | tee -a "$OUT/knnsan.log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases" | tr '\n' ' ')
        echo "$tool | ${res:-TIMEOUT}" | cut -c1-200
      done ;;
    ivf)
      # The IVF-Flat GPU test (build checked on the host, nprobe = nlist against the exact search, both walks
      # bit for bit, recall floors), then the Python package (as in the knn step) and the bench: build time,
      # queries/s and recall@10 per nprobe on 2^20 x D128 clustered vectors, nlist 1024, 10^4 queries.
      CAKE_HANG_TIMEOUT_MS=5000 timeout ${CAKE_IVF_TEST_TIMEOUT:-200} $B/tests/gpu/cake_gpu_test_ivf > "$OUT/test_ivf.log" 2>&1; echo "rc=$?"
      grep -E "ERROR|test cases|waited past|seed|SKIPPED|recall|empty list" "$OUT/test_ivf.log" | head -n 40 | cut -c1-200
      pip install -q --no-index --no-deps --target /tmp/bt .whl/*.whl > "$OUT/pip.log" 2>&1
      PYTHONPATH=/tmp/bt timeout 130 python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/cp --config-settings=build-dir=/tmp/pyb . >> "$OUT/pip.log" 2>&1; echo "pip rc=$?"
      PYTHONPATH=/tmp/cp:/tmp/bt timeout ${CAKE_IVF_TIMEOUT:-400} python3 bench/peers/bench_peers.py --family ivf --runs ${CAKE_IVF_RUNS:-20} --json "$OUT/ivf.json" 2>&1 | tee "$OUT/bench_ivf.log" | grep -vE "Warning|warn" | cut -c1-220 ;;
    ivfsan)
      for tool in memcheck racecheck synccheck; do
        res=$(timeout 200 compute-sanitizer --tool $tool --print-limit 3 $B/tests/gpu/cake_gpu_test_ivf -tc="*ivf build and search*" 2>&1 | tee -a "$OUT/ivfsan.log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases" | tr '
' ' ')
        echo "$tool | ${res:-TIMEOUT}" | cut -c1-200
      done ;;
    attention)
      # The attention GPU test, then the Python package (built here from the pinned wheels in .whl/, as in
      # the kmeans step) and the same-process bench against torch SDPA (cuDNN and flash backends) on issue
      # 12's prefill shapes. Time limits add up to 610 s (test 280, package 130, bench 200): set CAKE_ATTN_TEST_TIMEOUT lower, or run the test alone.
      CAKE_HANG_TIMEOUT_MS=5000 timeout ${CAKE_ATTN_TEST_TIMEOUT:-280} $B/tests/gpu/cake_gpu_test_attention > "$OUT/test_attention.log" 2>&1; echo "rc=$?"
      grep -E "ERROR|test cases|waited past|seed|SKIPPED" "$OUT/test_attention.log" | head -n 12
      install_wheels
      PYTHONPATH=/tmp/bt timeout 130 python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/cp --config-settings=build-dir=/tmp/pyb . >> "$OUT/pip.log" 2>&1; echo "pip rc=$?"
      PYTHONPATH=/tmp/cp:/tmp/bt timeout ${CAKE_ATTN_TIMEOUT:-200} python3 bench/peers/bench_peers.py --family attention --runs ${CAKE_ATTN_RUNS:-30} --json "$OUT/attention.json" 2>&1 | tee "$OUT/bench_attention.log" | grep -vE "Warning|warn" | cut -c1-220 ;;
    decode)
      # Paged decode (issue 12 item 2): the GPU test, compute-sanitizer memcheck on its first case, then the
      # Python package (as in the attention step) and the bench against SDPA on issue 12's decode grid.
      # Time limits add up to 570 s (test 120, memcheck 120, package 130, bench 200).
      CAKE_HANG_TIMEOUT_MS=5000 timeout ${CAKE_DECODE_TEST_TIMEOUT:-120} $B/tests/gpu/cake_gpu_test_attention_decode > "$OUT/test_attention_decode.log" 2>&1; echo "rc=$?"
      grep -E "ERROR|test cases|waited past|seed|SKIPPED|rel_err" "$OUT/test_attention_decode.log" | head -n 24 | cut -c1-220
      res=$(timeout 120 compute-sanitizer --tool memcheck --print-limit 3 $B/tests/gpu/cake_gpu_test_attention_decode -tc="*matches*" 2>&1 | grep -E "ERROR SUMMARY|test cases" | tr '\n' ' ')
      echo "memcheck | ${res:-TIMEOUT}"
      python_package
      PYTHONPATH=/tmp/cp:/tmp/bt timeout ${CAKE_DECODE_TIMEOUT:-200} python3 bench/peers/bench_peers.py --family attention_decode --runs ${CAKE_DECODE_RUNS:-30} --json "$OUT/attention_decode.json" 2>&1 | tee "$OUT/bench_decode.log" | grep -vE "Warning|warn" | cut -c1-260 ;;
    pybuild)
      # the Python package, built here from the pinned wheels in .whl/ (peer wheels from .whl/peers/)
      install_wheels
      PYTHONPATH=/tmp/bt timeout 200 python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/cp --config-settings=build-dir=/tmp/pyb . >> "$OUT/pip.log" 2>&1; echo "pip rc=$?" ;;
    pytests)
      # the Python tier with a GPU and PyTorch (after the pybuild, kmeans or attention step built the package into /tmp/cp)
      (cd /tmp && PYTHONPATH=/tmp/cp:/tmp/bt timeout 300 python3 -m unittest discover -s "$OLDPWD/python/tests" -v) > "$OUT/pytests.log" 2>&1; echo "rc=$?"
      grep -E "FAIL|ERROR|skipped|^Ran|^OK" "$OUT/pytests.log" | head -n 20 ;;
    skipcheck)
      # a GPU test with no visible device must skip with a reason, not fail
      CUDA_VISIBLE_DEVICES= timeout 60 $B/tests/gpu/cake_gpu_test_kmeans 2>&1 | tail -n 4 ;;
    kmeanssorted)
      # the sorted update (counting sort + segment sums): its GPU case, memcheck on it, then the update alone
      # three ways (scatter, deterministic, sorted) after uniform and skewed assignments
      CAKE_HANG_TIMEOUT_MS=5000 timeout 150 $B/tests/gpu/cake_gpu_test_kmeans -tc="*sorted*" > "$OUT/test_kmeans_sorted.log" 2>&1; echo "rc=$?"
      grep -E "ERROR|test cases|assertions|waited past|not the mean|changed|seed" "$OUT/test_kmeans_sorted.log" | head -n 12 | cut -c1-200
      res=$(timeout 150 compute-sanitizer --tool memcheck --print-limit 3 $B/tests/gpu/cake_gpu_test_kmeans -tc="*sorted*" 2>&1 | tee "$OUT/kmeanssorted_san.log" | grep -E "ERROR SUMMARY|test cases" | tr '\n' ' ')
      echo "memcheck | ${res:-TIMEOUT}" | cut -c1-200
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      timeout ${CAKE_UPDATE_TIMEOUT:-250} $B/bench/cake_bench_kmeans --update --runs ${CAKE_KMEANS_RUNS:-20} --driver "$DRIVER" --json "$OUT/kmeans_update.json" 2>&1 | tee "$OUT/bench_kmeans_update.log" | cut -c1-220 ;;
    kmeanssan)
      # compute-sanitizer on one k-means GPU case (CAKE_SAN_CASE, a doctest filter: default the assignment's;
      # "*step*" the fused step's), each tool under CAKE_SAN_TIMEOUT seconds (default 150)
      for tool in memcheck racecheck synccheck; do
        res=$(timeout ${CAKE_SAN_TIMEOUT:-150} compute-sanitizer --tool $tool --print-limit 3 $B/tests/gpu/cake_gpu_test_kmeans -tc="${CAKE_SAN_CASE:-*picks the nearest*}" 2>&1 | tee -a "$OUT/kmeanssan.log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases" | tr '\n' ' ')
        echo "$tool | ${res:-TIMEOUT}" | cut -c1-200
      done ;;
    sancorpus)
      # the verify corpus under compute-sanitizer racecheck/synccheck, one process per case and twin, with the
      # hang trap on; the table for docs/diagnostics.md ("Agreement with compute-sanitizer") is $OUT/sancorpus.md
      # (rewritten after every row). CAKE_SANCORPUS_SHARD=0/2 then 1/2 splits it over two device calls.
      CAKE_HANG_TIMEOUT_MS=${CAKE_HANG_TIMEOUT_MS:-2000} timeout ${CAKE_SANCORPUS_TIMEOUT:-580} python3 tests/verify/sanitize_corpus.py \
        --bin $B/tests/verify/cake_verify_launch --out "$OUT" --jobs ${CAKE_SANCORPUS_JOBS:-6} --timeout 30 \
        --budget ${CAKE_SANCORPUS_BUDGET:-400} ${CAKE_SANCORPUS_CASES:+--cases $CAKE_SANCORPUS_CASES} ${CAKE_SANCORPUS_SHARD:+--shard $CAKE_SANCORPUS_SHARD} > "$OUT/sancorpus.log" 2>&1; echo "rc=$?"
      tail -n 3 "$OUT/sancorpus.log" | cut -c1-200 ;;
    prefilltail)
      # the stream-K tail (attention_prefill_config::tail_parts, k.split_tail): the GPU test's split-tail case and the
      # language's own (tests/kernels/split_tail_sum.hpp; hang trap on), then, not causal, the chosen schedule, it with
      # its last round split 4 / 8 / 16 / 32 ways, and it again (cake_bench_attention --variant tail; CAKE_TAIL_ARGS)
      CAKE_HANG_TIMEOUT_MS=5000 timeout ${CAKE_ATTN_TEST_TIMEOUT:-200} $B/tests/gpu/cake_gpu_test_attention -tc="*split tail*" > "$OUT/test_attention_tail.log" 2>&1; echo "attention test rc=$?"
      grep -E "ERROR|test cases|assertions|waited past|SKIPPED" "$OUT/test_attention_tail.log" | head -n 8
      CAKE_HANG_TIMEOUT_MS=5000 timeout 100 $B/tests/gpu/cake_gpu_test_compute -tc="split tail*" > "$OUT/test_split_tail.log" 2>&1; echo "compute test rc=$?"
      grep -E "ERROR|test cases|assertions|waited past|SKIPPED" "$OUT/test_split_tail.log" | head -n 8
      timeout ${CAKE_TAIL_TIMEOUT:-240} $B/bench/cake_bench_attention --variant tail ${CAKE_TAIL_ARGS:-} --runs ${CAKE_ATTN_RUNS:-20} > "$OUT/prefill_tail.log" 2>&1; echo "bench rc=$?"
      cut -c1-150 "$OUT/prefill_tail.log" | grep -v "^$" | tail -n 80 ;;
    prefillvariants)
      # the prefill GPU test (grid, persistent, persistent longest-first, two Q stages, O by TMA; hang trap on),
      # then the variants' times on issue 12's prefill shapes (cake_bench_attention, CAKE_VARIANTS_ARGS, default
      # --variant all)
      CAKE_HANG_TIMEOUT_MS=5000 timeout ${CAKE_ATTN_TEST_TIMEOUT:-150} $B/tests/gpu/cake_gpu_test_attention > "$OUT/test_attention.log" 2>&1; echo "rc=$?"
      grep -E "ERROR|test cases|waited past|SKIPPED" "$OUT/test_attention.log" | head -n 12
      timeout ${CAKE_VARIANTS_TIMEOUT:-200} $B/bench/cake_bench_attention ${CAKE_VARIANTS_ARGS:---variant all} --runs ${CAKE_ATTN_RUNS:-20} > "$OUT/prefill_variants.log" 2>&1; echo "rc=$?"
      cut -c1-150 "$OUT/prefill_variants.log" | grep -v "^$" | tail -n 130 ;;
    prefillcausalw3)
      # causal D = 64 with 192-row query tiles (three consumers; the key blocks crossing the diagonal masked in
      # ranges; skip_past_rows: a warpgroup whose rows all lie past S computes nothing): the GPU test cases of query
      # tiles of other than bn rows and of skip_past_rows (hang trap on), then the entry point's schedule next to the
      # three-consumer ones (cake_bench_attention --variant causal-w3), both KV head counts, then D = 64 non-causal
      # with and without skip_past_rows (--variant skip-past, 32 KV heads)
      CAKE_HANG_TIMEOUT_MS=5000 timeout ${CAKE_ATTN_TEST_TIMEOUT:-200} $B/tests/gpu/cake_gpu_test_attention -tc="*other than bn rows*,*skip_past_rows*" > "$OUT/test_attention_causal_w3.log" 2>&1; echo "rc=$?"
      grep -E "ERROR|test cases|assertions|waited past|SKIPPED" "$OUT/test_attention_causal_w3.log" | head -n 12
      for hk in 32 8; do
        timeout ${CAKE_VARIANTS_TIMEOUT:-150} $B/bench/cake_bench_attention --variant causal-w3 --hk $hk ${CAKE_VARIANTS_ARGS:-} --runs ${CAKE_ATTN_RUNS:-20} > "$OUT/prefill_causal_w3_hk$hk.log" 2>&1; echo "rc=$?"
        grep -E "^attn" "$OUT/prefill_causal_w3_hk$hk.log" | cut -c1-150
      done
      timeout ${CAKE_VARIANTS_TIMEOUT:-150} $B/bench/cake_bench_attention --variant skip-past --hk 32 --runs ${CAKE_ATTN_RUNS:-20} > "$OUT/prefill_skip_past.log" 2>&1; echo "rc=$?"
      grep -E "^attn" "$OUT/prefill_skip_past.log" | cut -c1-150 ;;
    prefillcausallong)
      # causal D = 64 at S = 4k..16k, where a 192-row tile's masked work past the diagonal is a small share: the
      # entry point's schedule (from 8k three consumers over 112-key blocks, 2 stages, issuing freely, skip_past_rows)
      # next to the two-consumer lookahead schedule and the three-consumer forms of that key block and depth
      # (taking turns and free with skip_past_rows, free with skip_masked, free with neither), both KV head counts
      for hk in 32 8; do
        timeout ${CAKE_VARIANTS_TIMEOUT:-200} $B/bench/cake_bench_attention --variant causal-w3 --w3 ${CAKE_W3:-112,2} --min-s ${CAKE_MIN_S:-4096} --hk $hk --runs ${CAKE_ATTN_RUNS:-20} > "$OUT/prefill_causal_long_hk$hk.log" 2>&1; echo "rc=$?"
        grep -E "^attn" "$OUT/prefill_causal_long_hk$hk.log" | cut -c1-150
      done ;;
    prefilld256)
      # head dim 256 (issue 12's stretch): the prefill GPU tests (the entry point's f64 check with D = 256 cases,
      # varlen, refusals; hang trap on), memcheck on the f64 check, then the package and the same-process bench
      # against SDPA (cuDNN, flash) at D = 256 on the issue's token counts. Limits add up to 600 s.
      CAKE_HANG_TIMEOUT_MS=5000 timeout ${CAKE_ATTN_TEST_TIMEOUT:-150} $B/tests/gpu/cake_gpu_test_attention -tc="attention prefill matches*,attention prefill varlen matches*,*refuses*" > "$OUT/test_attention_d256.log" 2>&1; echo "rc=$?"
      grep -E "ERROR|test cases|assertions|waited past|SKIPPED|D 256" "$OUT/test_attention_d256.log" | head -n 16 | cut -c1-200
      res=$(timeout 120 compute-sanitizer --tool memcheck --print-limit 3 $B/tests/gpu/cake_gpu_test_attention -tc="attention prefill matches an f64*" 2>&1 | grep -E "ERROR SUMMARY|test cases" | tr '\n' ' ')
      echo "memcheck | ${res:-TIMEOUT}"
      python_package
      PYTHONPATH=/tmp/cp:/tmp/bt timeout ${CAKE_ATTN_TIMEOUT:-200} python3 bench/peers/bench_peers.py --family attention --head-dims 256 --runs ${CAKE_ATTN_RUNS:-20} --json "$OUT/attention_prefill_d256.json" 2>&1 | tee "$OUT/bench_attention_d256.log" | grep -vE "Warning|warn" | cut -c1-220 ;;
    prefilllookahead)
      # the lookahead's GPU test cases (hang trap on), then the entry point's schedule and the same with the
      # lookahead side by side on issue 12's prefill shapes (cake_bench_attention --variant lookahead)
      CAKE_HANG_TIMEOUT_MS=5000 timeout ${CAKE_ATTN_TEST_TIMEOUT:-200} $B/tests/gpu/cake_gpu_test_attention -tc="*lookahead*" > "$OUT/test_attention_lookahead.log" 2>&1; echo "rc=$?"
      grep -E "ERROR|test cases|assertions|waited past|SKIPPED" "$OUT/test_attention_lookahead.log" | head -n 12
      timeout ${CAKE_VARIANTS_TIMEOUT:-300} $B/bench/cake_bench_attention --variant lookahead ${CAKE_VARIANTS_ARGS:-} --runs ${CAKE_ATTN_RUNS:-20} > "$OUT/prefill_lookahead.log" 2>&1; echo "rc=$?"
      grep -E "^attn" "$OUT/prefill_lookahead.log" | cut -c1-150 ;;
    prefillserpentine)
      # the causal GPU test cases (the chosen schedule walks serpentine; hang trap on), then the chosen schedule
      # walking strided and serpentine side by side on the causal prefill shapes (cake_bench_attention --variant serpentine)
      CAKE_HANG_TIMEOUT_MS=5000 timeout ${CAKE_ATTN_TEST_TIMEOUT:-300} $B/tests/gpu/cake_gpu_test_attention > "$OUT/test_attention_serpentine.log" 2>&1; echo "rc=$?"
      grep -E "ERROR|test cases|assertions|waited past|SKIPPED" "$OUT/test_attention_serpentine.log" | head -n 12
      for hk in 32 8; do
        timeout ${CAKE_VARIANTS_TIMEOUT:-300} $B/bench/cake_bench_attention --variant serpentine --hk $hk ${CAKE_VARIANTS_ARGS:-} --runs ${CAKE_ATTN_RUNS:-20} > "$OUT/prefill_serpentine_hk$hk.log" 2>&1; echo "rc=$?"
        grep -E "^attn.*causal" "$OUT/prefill_serpentine_hk$hk.log" | cut -c1-150
      done ;;
    prefillfma)
      # exp2 on the FMA pipe (config.exp2_fma) and the reductions' chains: the GPU tests of exp2's shares and of the
      # prefill (hang trap on), then the chosen schedule built before (CAKE_OLD_BENCH, a binary carried with the
      # call; skipped if absent) and this build's chosen schedule with 0..4 of every 8 exp2 on the FMA pipe, on the
      # prefill shapes (CAKE_VARIANTS_ARGS, default --hk 32), then the pipes' load under ncu at D = 64, S = 1k
      timeout 120 $B/tests/gpu/cake_gpu_test_compute -tc="*exp2*" > "$OUT/test_compute_exp2.log" 2>&1; echo "exp2 test rc=$?"
      grep -E "ERROR|test cases|assertions|SKIPPED" "$OUT/test_compute_exp2.log" | head -n 8
      if [ "${CAKE_FMA_TEST:-1}" = 1 ]; then
        CAKE_HANG_TIMEOUT_MS=5000 timeout ${CAKE_ATTN_TEST_TIMEOUT:-280} $B/tests/gpu/cake_gpu_test_attention > "$OUT/test_attention_fma.log" 2>&1; echo "attention test rc=$?"
        grep -E "ERROR|test cases|assertions|waited past|SKIPPED" "$OUT/test_attention_fma.log" | head -n 12
      fi
      if [ -n "${CAKE_OLD_BENCH:-}" ] && [ -x "$CAKE_OLD_BENCH" ]; then
        timeout 200 "$CAKE_OLD_BENCH" --variant chosen ${CAKE_VARIANTS_ARGS:---hk 32} --runs ${CAKE_ATTN_RUNS:-20} > "$OUT/prefill_old.log" 2>&1; echo "old rc=$?"
        grep -E "^attn" "$OUT/prefill_old.log" | cut -c1-150
      fi
      timeout ${CAKE_VARIANTS_TIMEOUT:-300} $B/bench/cake_bench_attention --variant fma-share ${CAKE_VARIANTS_ARGS:---hk 32} --runs ${CAKE_ATTN_RUNS:-20} > "$OUT/prefill_fma.log" 2>&1; echo "rc=$?"
      grep -E "^attn" "$OUT/prefill_fma.log" | cut -c1-160
      if [ "${CAKE_FMA_NCU:-1}" = 1 ]; then
        M=gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed.sum
        timeout 150 ncu --metrics $M -k regex:'(?i)(sdpa|fprop|fmha|flash|attn)' --launch-skip 2 -c 1 python3 bench/h200/sdpa_one.py 1024 64 0 > "$OUT/ncu_fma_cudnn.log" 2>&1; echo "cudnn rc=$?"
        timeout 200 ncu --metrics $M -k regex:attn_fwd -c 40 $B/bench/cake_bench_attention --shape 64,1024,0 --variant fma-share --runs 2 > "$OUT/ncu_fma_cake.log" 2>&1; echo "cake rc=$?"
        for f in ncu_fma_cudnn ncu_fma_cake; do echo "== $f"; grep -E "^  [a-zA-Z_]+.*\(|^    [a-z_]+__|^attn" "$OUT/$f.log" | cut -c1-130 | head -n 80; done
      fi ;;
    prefillncu)
      # ncu on cuDNN's SDPA kernel (PyTorch) and on Cake's chosen prefill schedule at one shape (CAKE_NCU_SHAPE:
      # S,D,causal; default 1024,128,0, 32 KV heads): launch, occupancy, speed of light, L2 and DRAM, warp states
      IFS=, read -r nS nD nC <<< "${CAKE_NCU_SHAPE:-1024,128,0}"
      sec="--section LaunchStats --section Occupancy --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section InstructionStats"
      timeout 200 ncu $sec -k regex:'(?i)(sdpa|fprop|fmha|flash|attn)' --launch-skip 2 -c 1 python3 bench/h200/sdpa_one.py $nS $nD $nC > "$OUT/ncu_cudnn.log" 2>&1; echo "cudnn rc=$?"
      timeout 200 ncu $sec -k regex:attn_fwd -c 1 $B/bench/cake_bench_attention --shape $nD,$nS,$nC --variant chosen --runs 2 > "$OUT/ncu_cake.log" 2>&1; echo "cake rc=$?"
      for f in ncu_cudnn ncu_cake; do echo "== $f"; grep -E "^  [a-z_]+.*\(|Grid Size|Block Size|Registers Per|Shared Memory Config|Dynamic Shared|Waves Per SM|Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Hit Rate|L1/TEX Hit|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Executed Instructions  |Achieved Occupancy|DRAM Throughput|SM Frequency" "$OUT/$f.log" | head -n 30 | cut -c1-130; done ;;
    decodesweep)
      # paged decode alone (cake_bench_decode): the chosen schedule and every split / key block / depth on
      # issue 12's decode grid, then the two kernels' durations at B 1 under ncu
      timeout ${CAKE_DECODE_SWEEP_TIMEOUT:-300} $B/bench/cake_bench_decode --sweep --runs ${CAKE_DECODE_RUNS:-20} --json "$OUT/decode_sweep.json" > "$OUT/decode_sweep.log" 2>&1; echo "rc=$?"
      grep -E "chosen|best|error" "$OUT/decode_sweep.log" | cut -c1-150
      for shape in 1,1024 1,32768; do
        timeout 120 ncu --metrics gpu__time_duration.sum -k regex:attn_dec --launch-count 4 $B/bench/cake_bench_decode --shape $shape --runs 2 > "$OUT/decode_ncu_$shape.log" 2>&1
        grep -E "attn_dec|gpu__time_duration" "$OUT/decode_ncu_$shape.log" | head -n 8 | cut -c1-150
      done ;;
    decodelayout)
      # what the paged cache's layout costs decode (issue 12): one 1 GiB shape (B 64, 4k keys; B 512 with one KV
      # head) with pages shuffled or in order, pages of 16 or 64 keys, 8 KV heads or 1; then ncu's DRAM
      # figures for Cake's decode kernel and for the peer's (SDPA on contiguous K/V) at the same shape
      for v in "--shape 64,4096" "--shape 64,4096 --in-order" "--shape 64,4096 --page-size 64" "--shape 64,4096 --page-size 64 --in-order" \
               "--shape 512,4096 --heads 4,1" "--shape 512,4096 --heads 4,1 --in-order" "--shape 16,32768" "--shape 16,32768 --page-size 64 --in-order"; do
        timeout 60 $B/bench/cake_bench_decode --runs ${CAKE_DECODE_RUNS:-20} $v 2>&1 | grep -E "^decode|error" | sed "s/^/[$v] /" | cut -c1-200
      done
      M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,smsp__cycles_active.avg.pct_of_peak_sustained_elapsed
      timeout 120 ncu --metrics $M -k regex:attn_dec_d --launch-count 1 $B/bench/cake_bench_decode --shape 64,4096 --runs 1 > "$OUT/decode_ncu_layout.log" 2>&1
      grep -E "attn_dec|gpu__|dram__|lts__|sm__|launch__|smsp__" "$OUT/decode_ncu_layout.log" | head -n 14 | cut -c1-150
      timeout 120 ncu --metrics $M --launch-skip 2 --launch-count 1 -k regex:"fmha|cudnn|sm90|flash|attn|xmma" python3 bench/h200/sdpa_decode_probe.py 64 4096 > "$OUT/sdpa_ncu_layout.log" 2>&1
      grep -vE "^==PROF==|Warning" "$OUT/sdpa_ncu_layout.log" | grep -E "\(|gpu__|dram__|lts__|sm__|launch__|smsp__" | head -n 14 | cut -c1-150 ;;
    decodeprobe)
      # the load path's ceiling on decode's access pattern, hand-written TMA / cp.async / ld.global readers
      # (bench/h200/decode_load_probe.cu says what each is), on four of issue 12's decode rows
      nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o "$OUT/decode_load_probe" bench/h200/decode_load_probe.cu -lcuda || { echo "nvcc failed"; continue; }
      for shape in "64 4096 4" "256 4096 1" "64 16384 4" "128 2048 2"; do
        timeout 120 "$OUT/decode_load_probe" $shape ${CAKE_PROBE_MODE:-} 2>&1 | tee -a "$OUT/decode_load_probe.log"
      done
      rm -f "$OUT/decode_load_probe" ;;
    decodegap)
      # Cake's decode against the hand-written TMA reader at the same shapes, under ncu: each kernel's own
      # duration (decode and combine apart), DRAM throughput and occupancy
      M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,launch__registers_per_thread,launch__grid_size,launch__block_size
      for shape in 64,4096 256,4096; do
        timeout 150 ncu --metrics $M -k regex:attn_dec --launch-count 8 $B/bench/cake_bench_decode --shape $shape --runs 1 --loads-only > "$OUT/decode_gap_${shape/,/_}.log" 2>&1
        grep -E "attn_dec|gpu__|dram__|sm__|launch__" "$OUT/decode_gap_${shape/,/_}.log" | head -n 72 | cut -c1-120
      done
      nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o "$OUT/decode_load_probe" bench/h200/decode_load_probe.cu -lcuda || { echo "nvcc failed"; continue; }
      timeout 100 ncu --metrics $M -k regex:tma_reader --launch-skip 3 --launch-count 1 "$OUT/decode_load_probe" 64 4096 4 > "$OUT/decode_gap_probe.log" 2>&1
      grep -E "tma_reader|gpu__|dram__|sm__|launch__" "$OUT/decode_gap_probe.log" | head -n 12 | cut -c1-120
      rm -f "$OUT/decode_load_probe" ;;
    decodebarriers)
      # The fused combine with its count_arrival's named barrier as a constant (a role of one unit; before, "bar +
      # unit" made ptxas reserve all 16 of the CTA's barriers): the GPU test's fused cases (hang trap on), ncu's
      # launch and occupancy sections of the fused kernel at B 64, 1k keys from the build before
      # ($B/bench/cake_bench_decode_old, carried) and this one, then both binaries' --fused-combine timings on the
      # decode grid (each: the schedule, fused, the schedule again), old first
      CAKE_HANG_TIMEOUT_MS=5000 timeout ${CAKE_BARRIER_TEST_TIMEOUT:-150} $B/tests/gpu/cake_gpu_test_attention_decode -tc="*fused_combine*" > "$OUT/test_decode_fused.log" 2>&1; echo "decode test rc=$?"
      grep -E "ERROR|test cases|assertions|waited past|SKIPPED" "$OUT/test_decode_fused.log" | head -n 8
      for t in old new; do
        bin=$B/bench/cake_bench_decode; [ $t = old ] && bin=$B/bench/cake_bench_decode_old
        timeout 100 ncu --section LaunchStats --section Occupancy -k regex:'attn_dec_.*C$' --launch-count 1 $bin --shape 64,1024 --runs 1 --fused-combine > "$OUT/decode_barriers_ncu_$t.log" 2>&1; echo "ncu $t rc=$?"
        grep -E "Registers Per|Barrier|Block Limit|Theoretical Occupancy|Achieved Occupancy" "$OUT/decode_barriers_ncu_$t.log" | cut -c1-110
      done
      # (CAKE_BARRIER_SHAPES="B,ctx B,ctx ...": those shapes only, old and new alternating per shape)
      if [ -n "${CAKE_BARRIER_SHAPES:-}" ]; then
        for sh in $CAKE_BARRIER_SHAPES; do for t in old new; do
          bin=$B/bench/cake_bench_decode; [ $t = old ] && bin=$B/bench/cake_bench_decode_old
          timeout 60 $bin --runs ${CAKE_DECODE_RUNS:-30} --shape $sh --fused-combine 2>&1 | grep -E "^decode" | sed "s/^/$t /" | cut -c1-124
        done; done
      else
        for t in old new; do
          bin=$B/bench/cake_bench_decode; [ $t = old ] && bin=$B/bench/cake_bench_decode_old
          timeout ${CAKE_DECODE_TIMEOUT:-160} $bin --runs ${CAKE_DECODE_RUNS:-30} --fused-combine --json "$OUT/decode_barriers_$t.json" > "$OUT/decode_barriers_$t.log" 2>&1; echo "bench $t rc=$?"
          grep -E "^decode" "$OUT/decode_barriers_$t.log" | cut -c1-120
        done
      fi ;;
    decodectas)
      # decode declared ctas_per_sm(2) (the fused combine then at 168 registers, two CTAs per SM, where undeclared it
      # took 182 and one): the GPU test's fused and entry-point cases (hang trap on), ncu's occupancy of the fused kernel at B 64,
      # 1k keys, then this build's --fused-combine timings on the whole decode grid (the schedule, fused, the
      # schedule again) and the build before ($B/bench/cake_bench_decode_old, carried) on CAKE_OLD_SHAPES
      CAKE_HANG_TIMEOUT_MS=5000 timeout 120 $B/tests/gpu/cake_gpu_test_attention_decode -tc="*fused_combine*,*matches*" > "$OUT/test_decode_ctas.log" 2>&1; echo "decode test rc=$?"
      grep -E "ERROR|test cases|assertions|waited past|SKIPPED" "$OUT/test_decode_ctas.log" | head -n 8
      timeout 90 ncu --section LaunchStats --section Occupancy -k regex:'attn_dec_.*C$' --launch-count 1 $B/bench/cake_bench_decode --shape 64,1024 --runs 1 --fused-combine > "$OUT/decode_ctas_ncu.log" 2>&1; echo "ncu rc=$?"
      grep -E "Registers Per|Block Limit Reg|Block Limit Shared|Theoretical Occupancy|Achieved Occupancy" "$OUT/decode_ctas_ncu.log" | cut -c1-110
      if [ -n "${CAKE_CTAS_SHAPES:-}" ]; then  # (those shapes only: B,ctx B,ctx ...)
        for sh in $CAKE_CTAS_SHAPES; do
          timeout 60 $B/bench/cake_bench_decode --runs ${CAKE_DECODE_RUNS:-20} --shape $sh --fused-combine 2>&1 | grep -E "^decode" | cut -c1-120
        done
      else
        timeout ${CAKE_DECODE_TIMEOUT:-170} $B/bench/cake_bench_decode --runs ${CAKE_DECODE_RUNS:-20} --fused-combine --json "$OUT/decode_ctas.json" > "$OUT/decode_ctas.log" 2>&1; echo "bench rc=$?"
        grep -E "^decode" "$OUT/decode_ctas.log" | cut -c1-120
      fi
      for sh in ${CAKE_OLD_SHAPES:-}; do
        timeout 60 $B/bench/cake_bench_decode_old --runs ${CAKE_DECODE_RUNS:-20} --shape $sh --fused-combine 2>&1 | grep -E "^decode" | sed "s/^/old /" | cut -c1-124
      done ;;
    decodefusedncu)
      # why the fused combine is slower with several slices: ncu (launch, occupancy, speed of light, warp states,
      # instructions) on the decode kernel unfused and fused (name suffix C) at B 64, 1k keys (2 slices) and B 1,
      # 8k keys (many slices), then both timed with events (cake_bench_decode --fused-combine)
      S="--section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats"
      for sh in 64,1024 1,8192; do
        timeout 120 ncu $S -k regex:'attn_dec_' --launch-skip 0 --launch-count 6 $B/bench/cake_bench_decode --shape $sh --runs 1 --fused-combine > "$OUT/decode_fused_ncu_${sh/,/_}.log" 2>&1; echo "ncu $sh rc=$?"
        grep -E "^  [a-zA-Z_]*attn_dec|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit Registers|Warp Cycles Per Issued|Executed Instructions  |No Eligible|Grid Size|Memory Throughput" "$OUT/decode_fused_ncu_${sh/,/_}.log" | cut -c1-120 | head -n 60
        timeout 100 $B/bench/cake_bench_decode --runs 30 --shape $sh --fused-combine 2>&1 | grep -E "^decode|error" | cut -c1-140
      done ;;
    decodegap2)
      # Cake's loads-only decode kernel against the probe's TMA reader with all of Cake's features (gap mode's
      # last variant), B 64 at 4k keys, under ncu in one call: launch, occupancy, speed of light, DRAM bytes,
      # L2 hit rate, instructions; then both timed (events) in the same call
      M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum,sm__ctas_launched.sum
      S="--section LaunchStats --section Occupancy --section SpeedOfLight"
      timeout 150 ncu $S --metrics $M -k regex:'attn_dec_.*L$' --launch-skip 2 --launch-count 1 $B/bench/cake_bench_decode --shape 64,4096 --runs 1 --loads-only > "$OUT/decode_gap2_cake.log" 2>&1; echo "ncu cake rc=$?"
      nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o "$OUT/decode_load_probe" bench/h200/decode_load_probe.cu -lcuda || { echo "nvcc failed"; continue; }
      timeout 150 ncu $S --metrics $M -k regex:tma_reader --launch-skip 187 --launch-count 1 "$OUT/decode_load_probe" 64 4096 4 gap > "$OUT/decode_gap2_probe.log" 2>&1; echo "ncu probe rc=$?"
      for f in cake probe; do echo "== $f"; grep -E "Duration|DRAM Throughput|Memory Throughput|Registers Per|Shared Memory Config|Dynamic Shared|Static Shared|Block Limit|Achieved Occupancy|Theoretical Occupancy|Waves Per SM|Cluster|dram__bytes|lts__t_sector_hit|inst_executed|ctas_launched|  [a-z_]*attn_dec|tma_reader" "$OUT/decode_gap2_$f.log" | cut -c1-110 | head -n 40; done
      timeout 100 $B/bench/cake_bench_decode --runs 20 --shape 64,4096 --loads-only 2>&1 | grep -E "^decode|error" | cut -c1-100
      timeout 100 $B/bench/cake_bench_decode --runs 20 --shape 256,4096 --loads-only 2>&1 | grep -E "^decode|error" | cut -c1-100
      timeout 100 "$OUT/decode_load_probe" 64 4096 4 gap 2>&1 | grep -E "tma stages 3  |head-first"
      timeout 100 "$OUT/decode_load_probe" 256 4096 1 gap 2>&1 | grep -E "tma stages 3  |head-first"
      rm -f "$OUT/decode_load_probe" ;;
    gemvprobe)
      # small-M GEMM: how fast B [N, K] can be read by TMA boxes, by tile shape and split order, against
      # cuBLAS on the same shape (bench/h200/gemv_load_probe.cu says what each variant is)
      nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o "$OUT/gemv_load_probe" bench/h200/gemv_load_probe.cu -lcuda -lcublas || { echo "nvcc failed"; continue; }
      # (CAKE_PROBE_MODE=a: only the variants that also load A's box, and the peer)
      for shape in "1 8192 28672" "1 4096 4096" "16 4096 14336" "8 57344 8192" "8 2048 7168"; do
        timeout 120 "$OUT/gemv_load_probe" $shape ${CAKE_PROBE_MODE:-} 2>&1 | tee -a "$OUT/gemv_load_probe.log"
      done
      rm -f "$OUT/gemv_load_probe" ;;
    gemvgap)
      # small-M GEMM: cake::gemm's candidates at M = 1, 8, 16 of Llama-3 70B's down projection (one
      # process per M, the peer in it), then ncu on the split-K kernel's first four launches at M = 1 and
      # M = 8 and on the hand-written reader's (R 128, P 1, S 2 interleaved: the split-K kernel's pattern)
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      for m in 1 8 16; do
        timeout 100 $B/bench/cake_bench_gemm_sweep --driver "$DRIVER" --dtype bf16 --shape $m,8192,28672 --json "$OUT/gemv_sweep_m$m.json" > "$OUT/gemv_sweep_m$m.log" 2>&1; echo "sweep M=$m rc=$?"
        grep -E "^  bf16|error" "$OUT/gemv_sweep_m$m.log" | cut -c1-400
      done
      S="--section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats"
      for m in 1 8; do
        timeout 150 ncu $S --metrics dram__bytes_read.sum,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum -k regex:splitk --launch-count 4 $B/bench/cake_bench_gemm_sweep --dtype bf16 --shape $m,8192,28672 --runs 2 --json "$OUT/ncu_tmp.json" > "$OUT/gemv_ncu_m$m.log" 2>&1; echo "ncu M=$m rc=$?"
        grep -E "splitk|Duration|DRAM Throughput|Grid Size|Cluster Size|Registers Per|Dynamic Shared|Achieved Occupancy|dram__bytes|lts__t_sector_hit|inst_executed|Stall|Warp Cycles Per Issued" "$OUT/gemv_ncu_m$m.log" | cut -c1-120 | head -n 60
      done
      nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o "$OUT/gemv_load_probe" bench/h200/gemv_load_probe.cu -lcuda -lcublas || { echo "nvcc failed"; continue; }
      timeout 100 ncu $S --metrics dram__bytes_read.sum,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum -k regex:tma_reader --launch-skip 3 --launch-count 1 "$OUT/gemv_load_probe" 1 8192 28672 > "$OUT/gemv_ncu_probe.log" 2>&1; echo "ncu probe rc=$?"
      grep -E "tma_reader|Duration|DRAM Throughput|Grid Size|Cluster Size|Registers Per|Dynamic Shared|Achieved Occupancy|dram__bytes|lts__t_sector_hit|inst_executed|Warp Cycles Per Issued" "$OUT/gemv_ncu_probe.log" | cut -c1-120 | head -n 20
      rm -f "$OUT/gemv_load_probe" "$OUT/ncu_tmp.json" ;;
    gemvpromo)
      # small-M GEMM: cake::gemm's candidates with TMA L2 promotion as built (256 bytes) and none
      # (CAKE_TMA_L2_PROMOTION=none), the peer in each process, on seven M <= 16 shapes of the domain
      small_m_sweeps promo_default
      CAKE_TMA_L2_PROMOTION=none small_m_sweeps promo_none ;;
    gemvsmall)
      # small-M GEMM after a change: the GEMM GPU test's every-candidate case, then the seven shapes' candidates
      gemm_candidates_test
      small_m_sweeps small ;;
    clusterexit)
      # a CTA of a cluster leaving by draining its multicast pipelines instead of a cluster barrier
      # (CAKE_CLUSTER_EXIT=drain, lower::emit_options::cluster_exit): the GEMM GPU test's table plans with it (hang
      # trap on), then one binary without (before) and with it (after), alternating, on shapes of clusters of 2 and
      # of none (the control); bench/gemm/ab_sweeps.py --changed '_c2' pairs them (clusterexit_ab.json)
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      CAKE_CLUSTER_EXIT=drain CAKE_CAND_TIMEOUT=200 gemm_candidates_test
      mkdir -p /tmp/ce
      for sh in bf16:64,7168,2048 bf16:256,2112,7168 bf16:512,2112,7168 bf16:2048,4096,4096 e4m3:256,2112,7168 e4m3:4096,4096,4096; do
        t=${sh%%:*}; d=${sh#*:}; f=${t}_${d//,/_}
        for run in before_1 after_1 after_2 before_2; do
          e=barrier; [ "${run%_*}" = after ] && e=drain
          CAKE_CLUSTER_EXIT=$e timeout 90 $B/bench/cake_bench_gemm_sweep --driver "$DRIVER" --dtype $t --shape $d --json /tmp/ce/${run%_*}_${f}_${run#*_}.json > /tmp/ce/${run}_${f}.log 2>&1 || echo "$sh $run rc=$?"
        done
      done
      python3 bench/gemm/ab_sweeps.py --before /tmp/ce/before_*.json --after /tmp/ce/after_*.json --changed '_c2' --json "$OUT/clusterexit_ab.json" \
        --note "a cluster's CTAs leave by draining their multicast pipelines (after) against the cluster barrier at the end (before)"
      tar czf "$OUT/clusterexit_runs.tgz" -C /tmp/ce . ;;
    skexit)
      # split-K's exit by the cluster sum's drain (2026-12-06): the split-K GPU test cases (hang trap on), then this
      # build against the build before it (cake_bench_gemm_sweep_before, carried) run with CAKE_CLUSTER_EXIT=drain, so
      # that only split-K's exit differs (the multicast drain in both), alternating; bench/gemm/ab_sweeps.py pairs them
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      CAKE_HANG_TIMEOUT_MS=5000 timeout 90 $B/tests/gpu/cake_gpu_test_compute -tc="cluster_sum*,split-K GEMM*" > "$OUT/test_compute_sk.log" 2>&1; echo "compute rc=$?"
      grep -E "ERROR|test cases|assertions|waited past" "$OUT/test_compute_sk.log" | head -n 4
      CAKE_CAND_TIMEOUT=150 gemm_candidates_test "*128-row split-K*"
      CAKE_CAND_TIMEOUT=200 gemm_candidates_test "*other sweep candidate*persistent*"
      mkdir -p /tmp/sx
      for sh in ${CAKE_SKEXIT_SHAPES:-bf16:1,4096,4096 bf16:8,2112,7168 bf16:128,2112,7168 e4m3:16,4096,4096}; do
        t=${sh%%:*}; d=${sh#*:}; f=${t}_${d//,/_}
        for run in before_1 after_1 after_2 before_2; do
          b=$B/bench/cake_bench_gemm_sweep; [ "${run%_*}" = before ] && b=$B/bench/cake_bench_gemm_sweep_before
          CAKE_CLUSTER_EXIT=drain timeout 90 $b --driver "$DRIVER" --dtype $t --shape $d --json /tmp/sx/${run%_*}_${f}_${run#*_}.json > /tmp/sx/${run}_${f}.log 2>&1 || echo "$sh $run rc=$?"
        done
      done
      python3 bench/gemm/ab_sweeps.py --before /tmp/sx/before_*.json --after /tmp/sx/after_*.json --changed '^sk[0-9]+_(bm128_)?bn[0-9]+_s[0-9]+$' --json "$OUT/skexit_ab.json" \
        --note "split-K's exit: the cluster sum's drain (after) against the cluster barrier (before); the multicast drain in both"
      tar czf "$OUT/skexit_runs.tgz" -C /tmp/sx . ;;
    resweep)
      # the shapes whose candidates changed on 2026-12-05 (the cluster sum's one-fence signals: every split-K
      # schedule; the narrow, deep tiles: M <= 128 and the few-tile shapes; --splitk-only selects exactly those),
      # both types, into two files for tools/gen/merge_sweeps.py; first the GPU test of the sweep's other
      # persistent schedules (the narrow tiles among them; hang trap on)
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      CAKE_CAND_TIMEOUT=${CAKE_CAND_TIMEOUT:-200} gemm_candidates_test "*other sweep candidate*persistent*"
      for t in ${CAKE_RESWEEP_TYPES:-e4m3 bf16}; do
        # (its estimate is low: 2026-12-05 on the H200 e4m3 passed 220 s, bf16 took 203 s; each type alone is one call)
        timeout ${CAKE_RESWEEP_TIMEOUT:-400} $B/bench/cake_bench_gemm_sweep --driver "$DRIVER" --dtype $t --splitk-only --json "$OUT/gemm_sweep_${t}_resweep.json" > "$OUT/resweep_$t.log" 2>&1; echo "$t rc=$?"
        grep -E "estimated|measured in|WRONG|error" "$OUT/resweep_$t.log" | cut -c1-200 | head -n 10
      done ;;
    midwidth)
      # the cooperative tile at a width between the sweep's own where the cost model says the waves fill better
      # (bench/gemm/sweep_candidates.hpp, model_width_plan; docs/gemm.md, "Widths between"): the search shapes whose
      # candidates include one (--between-widths-only), both types, one file per type for tools/gen/merge_sweeps.py;
      # then the held-out shapes that would get one, each alone (--shape: not evidence, a look at the rule on
      # shapes it was not written on)
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      for t in bf16 e4m3; do
        timeout ${CAKE_MIDWIDTH_TIMEOUT:-200} $B/bench/cake_bench_gemm_sweep --driver "$DRIVER" --dtype $t --between-widths-only --json "$OUT/gemm_sweep_${t}_midwidth.json" > "$OUT/midwidth_$t.log" 2>&1; echo "$t rc=$?"
        grep -E "estimated|measured in|WRONG|error" "$OUT/midwidth_$t.log" | cut -c1-200 | head -n 6
      done
      for ts in bf16:512,10240,8192 bf16:2048,2112,7168 bf16:1024,7168,16384 bf16:1024,7168,2048 e4m3:512,28672,4096 e4m3:512,10240,8192 e4m3:2048,2112,7168 e4m3:1024,7168,16384 e4m3:512,36864,7168 e4m3:1024,7168,2048; do
        [ -n "${CAKE_MIDWIDTH_HELD-1}" ] || break  # (CAKE_MIDWIDTH_HELD= : the search shapes only)
        t=${ts%%:*}; sh=${ts#*:}
        timeout 60 $B/bench/cake_bench_gemm_sweep --driver "$DRIVER" --dtype $t --shape $sh --json "$OUT/midwidth_held_${t}_${sh//,/_}.json" > "$OUT/midwidth_held_${t}_${sh//,/_}.log" 2>&1; echo "held $t $sh rc=$?"
      done
      python3 bench/gemm/midwidth_summary.py "$OUT"/*midwidth*.json --json "$OUT/gemm_midwidth.json" | tail -n 40 ;;
    widefill)
      # the search shapes above the few-tile ones whose 128 x 128 tiles fill their waves less than 80%, with the
      # wave-fill tile named (--plans; the sweep offered it there from 2026-12-05 until this step's H100 run of
      # 2026-12-06 measured it 1.18-1.75x slower than BN 176), every candidate, both types, one file per (type, shape)
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      for t in bf16 e4m3; do for sh in 1024,2112,7168:bn64_s8_c2 256,10240,8192:bn64_s12_c2_pp64_f1; do
        p=${sh#*:}; sh=${sh%%:*}
        timeout 90 $B/bench/cake_bench_gemm_sweep --driver "$DRIVER" --dtype $t --shape $sh --plans $p --json "$OUT/widefill_${t}_${sh//,/_}.json" > "$OUT/widefill_${t}_${sh//,/_}.log" 2>&1; echo "$t $sh rc=$?"
        grep -E "^  (bf16|e4m3)|error|WRONG" "$OUT/widefill_${t}_${sh//,/_}.log" | cut -c1-300
      done; done ;;
    skfence)
      # the cluster sum's signals as one fence and relaxed arrivals (docs/gemm.md, "The sum's signals"): the GEMM
      # GPU test's table plans and 128-row split-K cases on this build (hang trap on), then an A/B of the split-K
      # shapes' candidates against the build before (bench/cake_bench_gemm_sweep_before, carried), alternating
      # before / after / after / before per shape; bench/gemm/ab_sweeps.py pairs them (skfence_ab.json)
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      # (CAKE_SKFENCE_QUICK=1: the table's plans only and three shapes, for a short call)
      CAKE_CAND_TIMEOUT=200 gemm_candidates_test
      [ -n "${CAKE_SKFENCE_QUICK:-}" ] || CAKE_CAND_TIMEOUT=120 gemm_candidates_test "*128-row split-K*"
      mkdir -p /tmp/ab
      shapes="bf16:1,4096,4096 bf16:8,2112,7168 bf16:64,7168,2048 bf16:256,2112,7168 e4m3:16,4096,4096 e4m3:256,2112,7168 e4m3:128,8192,8192"
      [ -n "${CAKE_SKFENCE_QUICK:-}" ] && shapes="bf16:8,2112,7168 bf16:256,2112,7168 e4m3:256,2112,7168"
      for sh in $shapes; do
        t=${sh%%:*}; d=${sh#*:}; f=${t}_${d//,/_}
        for run in before_1 after_1 after_2 before_2; do
          b=$B/bench/cake_bench_gemm_sweep; [ "${run%_*}" = before ] && b=$B/bench/cake_bench_gemm_sweep_before
          timeout 90 $b --driver "$DRIVER" --dtype $t --shape $d --json /tmp/ab/${run%_*}_${f}_${run#*_}.json > /tmp/ab/${run}_${f}.log 2>&1 || echo "$sh $run rc=$?"
        done
      done
      python3 bench/gemm/ab_sweeps.py --before /tmp/ab/before_*.json --after /tmp/ab/after_*.json --json "$OUT/skfence_ab.json" \
        --note "the cluster sum's signals: one fence and relaxed arrivals (after) against one release arrive per CTA (before)"
      tar czf "$OUT/skfence_runs.tgz" -C /tmp/ab . ;;  # (each run's sweep JSON and log, one file back)
    peerkernels)
      # which kernel the peer runs where Cake is furthest behind (the held-out score's lowest rows, M 128-2048 with
      # N 2112-7168, and a few M <= 64): kernel name (cuBLAS's tile, cluster, split), grid, block, cluster, registers,
      # smem and time under ncu (bench/gemm/peer_kernels.cpp; e4m3 also prints cuBLASLt's algorithm configuration)
      timeout 240 ncu --csv --print-units base --section LaunchStats --metrics gpu__time_duration.sum --log-file "$OUT/peer_kernels_ncu.csv" \
        $B/bench/cake_bench_gemm_peer_kernels --calls 2 1,4096,4096 1,7168,2048 8,2112,7168 16,7168,2048 64,4096,4096 64,7168,2048 32,8192,28672 \
        128,2112,7168 128,4096,7168 128,6144,4096 256,2112,7168 256,7168,2048 256,4096,4096 512,2112,7168 2048,2112,7168 128,36864,7168 \
        > "$OUT/peer_kernels.log" 2>&1; echo "rc=$?"
      tail -n 3 "$OUT/peer_kernels.log"; grep -c gpu__time_duration "$OUT/peer_kernels_ncu.csv" ;;
    kladder)
      # small M: what a call costs at no K against what streaming costs, per schedule and for the peer (each
      # (M, N) at six K, every candidate and the peer in one process; bench/gemm/k_ladder_fit.py fits the lines;
      # about 30 s of timing and 20-30 JITs per ladder)
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      for sh in 1,4096 64,7168 128,2112; do
        timeout 150 $B/bench/cake_bench_gemm_sweep --driver "$DRIVER" --shape $sh,4096 --k-ladder 512,1024,2048,4096,8192,16384 \
          --json "$OUT/kladder_${sh//,/_}.json" > "$OUT/kladder_${sh//,/_}.log" 2>&1; echo "$sh rc=$?"
      done
      python3 bench/gemm/k_ladder_fit.py "$OUT"/kladder_*.json --json "$OUT/gemm_k_ladder.json" ;;
    skglobal)
      # split-K whose partial sums meet in global memory (count_arrival; docs/gemm.md): the GEMM GPU test's
      # global-sum cases (hang trap on: every width, splits 2..32, the counters back at 0), memcheck of the
      # second, three few-tile shapes against the cluster's split and cuBLAS (then step skglobalsweep)
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      # (CAKE_SKGLOBAL_NO_TEST=1: not the test, when an earlier call ran it at this commit)
      [ -n "${CAKE_SKGLOBAL_NO_TEST:-}" ] || gemm_candidates_test "*global*"
      timeout 150 compute-sanitizer --tool memcheck $B/tests/gpu/cake_gpu_test_gemm -tc="global-sum split-K*" > "$OUT/san_global.log" 2>&1; echo "memcheck rc=$?"
      grep -E "ERROR SUMMARY|test cases" "$OUT/san_global.log" | head -n 3
      for sh in 512,2112,7168 128,2112,7168 128,6144,4096; do
        timeout 90 $B/bench/cake_bench_gemm_sweep --driver "$DRIVER" --dtype bf16 --shape $sh --json "$OUT/skglobal_${sh//,/_}.json" > "$OUT/skglobal_${sh//,/_}.log" 2>&1; echo "$sh rc=$?"
        grep -E "^  bf16|error" "$OUT/skglobal_${sh//,/_}.log" | cut -c1-300
      done ;;
    skglobalsweep)
      # the sweep of the shapes whose candidates include split-K (M <= 128, then M >= 129; since 2026-12-04 the
      # global-sum fill pick among them) into two files for tools/gen/merge_sweeps.py
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      timeout 300 $B/bench/cake_bench_gemm_sweep --driver "$DRIVER" --splitk-only --max-m 128 --json "$OUT/gemm_sweep_global_small.json" > "$OUT/sweep_gsmall.log" 2>&1; echo "small rc=$?"
      grep -E "estimated|measured in|WRONG|error" "$OUT/sweep_gsmall.log" | cut -c1-200 | head -n 10
      timeout 100 $B/bench/cake_bench_gemm_sweep --driver "$DRIVER" --splitk-only --min-m 129 --json "$OUT/gemm_sweep_global_few.json" > "$OUT/sweep_gfew.log" 2>&1; echo "few rc=$?"
      grep -E "estimated|measured in|WRONG|error" "$OUT/sweep_gfew.log" | cut -c1-200 | head -n 10 ;;
    gemmclock)
      # why the sweep times the large bf16 GEMMs 10% faster than cake_bench_gemm (8192^3, BN 256 / 4 stages /
      # cluster 2: 1.46 against 1.63 ms; cuBLAS 1.62 in both): each program at 8192^3 with the SM clock and the
      # power sampled every 100 ms beside it (clocks_*.csv: clock MHz, power W)
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader,nounits -lms 100 > "$OUT/clocks_bench.csv" & SMI=$!
      timeout 120 $B/bench/cake_bench_gemm --no-fp8 --runs 200 --driver "$DRIVER" --benchmark_filter='gemm_bf16/8192x8192x8192' > "$OUT/clock_bench.log" 2>&1; echo "bench rc=$?"; kill $SMI
      grep -E "^gemm_|error" "$OUT/clock_bench.log" | cut -c1-200
      nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader,nounits -lms 100 > "$OUT/clocks_sweep.csv" & SMI=$!
      timeout 120 $B/bench/cake_bench_gemm_sweep --driver "$DRIVER" --dtype bf16 --shape 8192,8192,8192 --json "$OUT/clock_sweep.json" > "$OUT/clock_sweep.log" 2>&1; echo "sweep rc=$?"; kill $SMI
      grep -E "^  bf16|error" "$OUT/clock_sweep.log" | cut -c1-300
      for f in bench sweep; do awk -F', ' -v f=$f '$1 > 1000 {n++; c += $1; p += $2; if ($1 < lo || lo == 0) lo = $1} END {printf "%s: %d busy samples, mean %.0f MHz (min %d), %.0f W\n", f, n, c / n, lo, p / n}' "$OUT/clocks_$f.csv"; done ;;
    gemmcand)
      # the GEMM GPU test's plan cases (hang trap on), both types: the dispatch table's plans
      # (CAKE_CAND_CASES: other case patterns, e.g. "*other sweep candidate*persistent*" or "*128-row split-K*")
      gemm_candidates_test "${CAKE_CAND_CASES:-*every dispatch-table plan*}" ;;
    decodeab)
      # decode before / after a change, same machine and run: the GPU test (new binary), then
      # build-h200/bench/cake_bench_decode_base (a copy built before the change) and the new binary
      # (CAKE_DECODEAB_ARGS: extra flags for the new one)
      CAKE_HANG_TIMEOUT_MS=5000 timeout 100 $B/tests/gpu/cake_gpu_test_attention_decode > "$OUT/test_attention_decode.log" 2>&1; echo "rc=$?"
      grep -E "ERROR|test cases|assertions|waited past" "$OUT/test_attention_decode.log" | head -n 8 | cut -c1-200
      timeout 100 $B/bench/cake_bench_decode_base --runs 20 --json "$OUT/decode_base.json" 2>&1 | grep -E "^decode|error" | sed "s/^/base /" | cut -c1-100
      timeout 160 $B/bench/cake_bench_decode --runs 20 ${CAKE_DECODEAB_ARGS:-} --json "$OUT/decode_new.json" 2>&1 | grep -E "^decode|error" | sed "s/^/new  /" | cut -c1-100 ;;
    decodehost)
      # where the host time of a Python decode call goes (after a step that built the package into /tmp/cp)
      PYTHONPATH=/tmp/cp:/tmp/bt timeout 120 python3 bench/h200/decode_host_probe.py 2>&1 | tee "$OUT/decode_host.log" | grep -vE "Warning|warn" | cut -c1-200 | head -n 40 ;;
    griddep)
      # programmatic launch: exact with griddep_wait, the race without it (reported as a message)
      timeout 120 $B/tests/gpu/cake_gpu_test_griddep -s > "$OUT/test_griddep.log" 2>&1; echo "rc=$?"
      grep -E "MESSAGE|no griddep_wait|ERROR|test cases|SKIPPED" "$OUT/test_griddep.log" | head -n 12 ;;
    sanprobe)
      # minimal hand-written forms of the patterns behind the corpus's "sanitizer only" rows, each under
      # racecheck and synccheck (bench/h200/sanitizer_probe.cu says what each kernel is)
      nvcc -std=c++17 -arch=sm_90a -o "$OUT/sanitizer_probe" bench/h200/sanitizer_probe.cu || { echo "nvcc failed"; continue; }
      for k in split_aligned split_aligned_cluster1 split_aligned_nocluster same_aligned same_aligned_nocluster split_plain split_plain_cluster1 split_plain_nocluster split_leader split_leader_nocluster split_barsync_nocluster dsmem_mbar_cta dsmem_mbar_cluster dsmem_barrier; do
        plain=$("$OUT/sanitizer_probe" $k 2>&1 | tail -n 1)
        for tool in racecheck synccheck; do
          timeout 120 compute-sanitizer --tool $tool --print-limit 200 "$OUT/sanitizer_probe" $k > "$OUT/sanprobe_${k}_$tool.log" 2>&1
          n=$(grep -cE "^========= (Error|Warning)|hazard" "$OUT/sanprobe_${k}_$tool.log")
          s=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanprobe_${k}_$tool.log" | tr '\n' ' ')
          echo "$k | $tool | $plain | reports $n | $s" | cut -c1-200
        done
      done ;;
    kgroup)
      # split-K through global memory with each split's K blocks in runs (_kg4 ...: every splits-th run of 4; _kgN
      # with N = ceil(K blocks / splits): one run per split) against every splits-th block (the committed form),
      # next to the sweep's candidates; CAKE_KG_SPECS replaces the list ("type:M,N,K:plan,plan ..."). Step kgroupncu:
      # ncu's DRAM bytes per launch at bf16 64 x 8192 x 28672 (the interleaved form read 1.15x B there, 2026-12-07)
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      for spec in ${CAKE_KG_SPECS:-bf16:32,8192,28672:sk3_bn192_s6_g_kg8,sk3_bn192_s6_g_kg150 \
                  bf16:1,4096,7168:sk2_bn64_s6_g_kg8,sk2_bn64_s6_g_kg56,sk4_bn128_s6_g_kg28 \
                  bf16:128,8192,28672:sk3_bm128_bn192_s5_g_kg8,sk3_bm128_bn192_s5_g_kg150 \
                  e4m3:64,57344,8192:sk2_bn176_s6_g_kg8,sk2_bn176_s6_g_kg32 \
                  bf16:512,2112,7168:sk3_bm128_bn192_s5_g_kg4,sk3_bm128_bn192_s5_g_kg38 \
                  bf16:128,6144,4096:sk3_bm128_bn144_s6_g_kg4,sk3_bm128_bn144_s6_g_kg22 \
                  bf16:1,4096,4096:sk4_bn128_s6_g_kg16,sk2_bn64_s6_g_kg32,sk2_bn64_s6_kg32}; do
        IFS=: read -r t sh plans <<< "$spec"; f="$OUT/kg_${t}_${sh//,/_}"
        timeout 100 $B/bench/cake_bench_gemm_sweep --driver "$DRIVER" --dtype $t --shape $sh --plans $plans --runs ${CAKE_KG_RUNS:-20} --json "$f.json" > "$f.log" 2>&1; echo "$t $sh rc=$?"
        grep -E "WRONG|error" "$f.log" | head -n 5 | cut -c1-200
      done
      sweep_summary "$OUT/kg_*.json" 4 '_g'
      ;;
    worstalts)
      # the held-out (type, shape) pairs furthest below the peer (H100 run 7, H200 2026-12-06): every sweep candidate at
      # that very M plus the narrow, deep schedules, against the peer; is the loss the table's pick or the candidates?
      DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
      for spec in ${CAKE_WORST_SPECS:-e4m3:64,7168,2048 e4m3:128,6144,4096 e4m3:128,2112,7168 e4m3:128,4096,7168 e4m3:1,4096,4096 bf16:128,4096,7168}; do
        IFS=: read -r t sh <<< "$spec"; f="$OUT/worst_${t}_${sh//,/_}"
        timeout 100 $B/bench/cake_bench_gemm_sweep --driver "$DRIVER" --dtype $t --shape $sh --plans bn64_s12_c1_pp64_f1,bn64_s12_c2_pp64_f1,bn64_s8_c1,bn64_s8_c2,bn96_s10_c1_pp64_f1,bn96_s10_c2_pp64_f1 \
          --runs ${CAKE_WORST_RUNS:-20} --json "$f.json" > "$f.log" 2>&1; echo "$t $sh rc=$?"
        grep -E "WRONG|error" "$f.log" | head -n 5 | cut -c1-200
      done
      sweep_summary "$OUT/worst_*.json" 6
      ;;
    kgroupncu)
      timeout 200 ncu --clock-control none --kernel-name regex:splitk_g --metrics dram__bytes_read.sum,gpu__time_duration.sum,launch__grid_size \
        --csv --page raw $B/bench/cake_bench_gemm_sweep --shape 64,8192,28672 --dtype bf16 --runs 2 --plans sk3_bn192_s6_g_kg150 > "$OUT/ncu_kg.csv" 2> "$OUT/ncu_kg.err"
      echo "ncu rc=$?"; python3 bench/h200/ncu_dram_sum.py "$OUT/ncu_kg.csv" | tail -n 8 ;;
    splitkreread)
      # the cost model's splitk_reread term (docs/cost-model.md, "Split-K's re-read panels"), checked with counters:
      # DRAM bytes read per GEMM launch of the sweep's candidates at bf16 128 x 8192 x 28672 (64-row split-K: two row
      # tiles read each B panel; B 470 MB), at M = 64 (one row tile) and at 128 x 4096 x 4096 (B within L2); the
      # term predicts about 1.5x B at the first, 1x at the others (grid 256 / 128: sk2_bn128_s6 at M 128 / 64)
      for s in 128,8192,28672 64,8192,28672 128,4096,4096; do
        timeout 150 ncu --clock-control none --kernel-name regex:^gemm_ --metrics dram__bytes_read.sum,gpu__time_duration.sum,launch__grid_size \
          --csv --page raw $B/bench/cake_bench_gemm_sweep --shape $s --dtype bf16 --runs 2 > "$OUT/ncu_${s//,/_}.csv" 2> "$OUT/ncu_${s//,/_}.err"
        echo "$s rc=$?"; tail -n 2 "$OUT/ncu_${s//,/_}.err" | cut -c1-200
      done
      python3 bench/h200/ncu_dram_sum.py "$OUT"/ncu_*.csv ;;
    sanitize)
      for tool in memcheck racecheck synccheck; do
        echo "== compute-sanitizer --tool $tool"
        timeout 240 compute-sanitizer --tool $tool --print-limit 5 $B/tests/gpu/cake_gpu_test_lowered_kernels 2>&1 | tail -n 8
      done ;;
  esac
done
