#!/usr/bin/env bash
# One session on a GPU host from a bundle (deploy/bundle/make-bundle.sh), in a bounded time:
#   bash scripts/gpu-session.sh bundle/tune-bundle.tar.xz OUT_DIR     (from the repository root)
# 1. unpacks the bundle into /tmp; 2. OUT_DIR/machine.txt: nvidia-smi, lscpu, the GPU's SM count
# and clock; 3. runs the bundle's gpu tests (gtest XML into OUT_DIR/tests/); 4. starts tune-daemon
# with one local cuda worker on 127.0.0.1; 5. tunes bench/gpu_workloads.txt with tune's templates
# and the vendor libraries' (target cuda -arch=sm_NN -libs=cublas,cudnn), each job within an
# equal share of the time left before the deadline (cancelled with the trials it has when its
# share is spent); 6. exports the log (OUT_DIR/export.jsonl); 7. writes OUT_DIR/report.md
# (bench/gpu_report.py); 8. prints a summary. Every step runs even when an earlier one failed;
# the summary names the failed steps. Every process logs into OUT_DIR.
#
# Environment (defaults): TUNE_GPU_TRIALS (48) trials per workload; TUNE_GPU_SESSION_S (470)
# seconds for the whole script; TUNE_GPU_TESTS_S (120) for the tests; TUNE_GPU_DEVICE (cuda:0);
# TUNE_GPU_LIBS (cublas,cudnn); TUNE_GPU_WORKLOADS (bench/gpu_workloads.txt); TUNE_GPU_ARCH
# (detected, e.g. sm_90; sm_90a for Hopper's wgmma templates, run by the sm_90 worker);
# TUNE_GPU_STRATEGY (auto): the jobs' search ("seeds" measures each template's default and
# seeds in order, nothing else: an A/B of configs put side by side there);
# TUNE_GPU_TEMPLATES (all that apply): the templates jobs may use,
# space-separated, e.g. "gemm.cuda.mma gemm.cuda.cublaslt" (a workload's job gets those of its op); TUNE_GPU_PEAKS (the peaks tune-bench-gpu-peak measures, when the
# bundle has it): the report's peaks of other dtypes, e.g. "bf16=989000 fp8e4m3=1979000" in
# GFLOPS (bench/gpu_report.py --peak).
set -uo pipefail
started=$SECONDS
bundle_tar=${1:?usage: gpu-session.sh BUNDLE.tar.xz OUT_DIR}
out=${2:?usage: gpu-session.sh BUNDLE.tar.xz OUT_DIR}
repo=$(cd "$(dirname "$0")/.." && pwd)
trials=${TUNE_GPU_TRIALS:-48}
budget=${TUNE_GPU_SESSION_S:-470}
tests_budget=${TUNE_GPU_TESTS_S:-120}
device=${TUNE_GPU_DEVICE:-cuda:0}
libs=${TUNE_GPU_LIBS:-cublas,cudnn}
strategy=${TUNE_GPU_STRATEGY:-auto}
workloads_file=${TUNE_GPU_WORKLOADS:-$repo/bench/gpu_workloads.txt}
# One --template per name of TUNE_GPU_TEMPLATES whose op (the name's first part: gemm, conv2d)
# is the workload's, so that one file may mix GEMMs and convolutions.
template_args() {
  local op=${1%%:*} args="" name
  for name in ${TUNE_GPU_TEMPLATES:-}; do
    [ "${name%%.*}" = "$op" ] && args+=" --template $name"
  done
  echo "$args"
}
mkdir -p "$out/tests"
out=$(cd "$out" && pwd)
deadline=$((started + budget))
left() { echo $((deadline - SECONDS)); }

failed=()
step_log() { echo "[$((SECONDS - started))s] $*" | tee -a "$out/session.log"; }
fail() {
  failed+=("$1")
  step_log "FAILED: $1${2:+: $2}"
}

# --- 1. unpack -----------------------------------------------------------------------------------
step_log "unpacking $bundle_tar"
work=/tmp/tune-gpu-session
rm -rf "$work" && mkdir -p "$work"
if tar -C "$work" -xJf "$bundle_tar" 2>"$out/unpack.log"; then
  bundle=$work/tune-bundle
  bin=$bundle/bin
  export PATH=$bin:$PATH  # ld.lld for tune-daemon's kernel libraries
  cat "$bundle/share/tune/BUNDLE" >>"$out/session.log" 2>/dev/null
else
  fail unpack "$(tail -2 "$out/unpack.log")"
  bundle=$work/tune-bundle
  bin=$bundle/bin
fi

# --- 2. machine facts ------------------------------------------------------------------------
step_log "machine facts"
{
  echo "## uname"; uname -a
  echo "## os"; grep PRETTY_NAME /etc/os-release
  echo "## nvidia-smi"; nvidia-smi 2>&1
  echo "## nvidia-smi query"
  nvidia-smi --query-gpu=name,compute_cap,clocks.max.sm,clocks.sm,memory.total,power.limit,driver_version \
    --format=csv 2>&1
  echo "## lscpu"; lscpu 2>&1
  echo "## free"; free -g 2>&1
} >"$out/machine.txt" 2>&1
# SM count, SM clock and compute capability from the CUDA driver itself (no toolkit needed).
python3 - >"$out/gpu.json" 2>"$out/gpu_facts.log" <<'EOF'
import ctypes, json, subprocess
cuda = ctypes.CDLL("libcuda.so.1")
def check(rc, what):
    if rc != 0:
        raise SystemExit(f"{what}: CUDA error {rc}")
check(cuda.cuInit(0), "cuInit")
dev = ctypes.c_int()
check(cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
def attr(code):
    v = ctypes.c_int()
    check(cuda.cuDeviceGetAttribute(ctypes.byref(v), code, dev), f"attribute {code}")
    return v.value
name = ctypes.create_string_buffer(256)
cuda.cuDeviceGetName(name, 256, dev)
facts = {"name": name.value.decode(), "sm_count": attr(16), "clock_khz": attr(13),
         "major": attr(75), "minor": attr(76)}
try:
    mhz = subprocess.run(["nvidia-smi", "--query-gpu=clocks.max.sm", "--format=csv,noheader,nounits",
                          "-i", "0"], capture_output=True, text=True).stdout.strip()
    facts["max_sm_clock_mhz"] = int(mhz.split()[0])
except Exception:
    facts["max_sm_clock_mhz"] = facts["clock_khz"] // 1000
# FP32 lanes per SM: 64 on sm_80 (A100), 128 on sm_86/89/90 and sm_100+.
lanes = 64 if (facts["major"], facts["minor"]) == (8, 0) else 128
facts["fp32_lanes_per_sm"] = lanes
facts["peak_gflops"] = facts["sm_count"] * lanes * 2 * facts["max_sm_clock_mhz"] / 1000.0
print(json.dumps(facts))
EOF
[ -s "$out/gpu.json" ] || fail gpu-facts "$(tail -1 "$out/gpu_facts.log")"
cat "$out/gpu.json" >>"$out/machine.txt" 2>/dev/null
json_field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$out/gpu.json" "$1" 2>/dev/null; }
arch=${TUNE_GPU_ARCH:-}
if [ -z "$arch" ]; then
  major=$(json_field major)
  minor=$(json_field minor)
  if [ -n "$major" ]; then
    arch=sm_$major$minor
  else
    cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null | tr -d ' .')
    arch=sm_${cap:-90}
  fi
fi
peak=$(json_field peak_gflops)
peak_note="theoretical: $(json_field sm_count) SMs x $(json_field fp32_lanes_per_sm) FP32 lanes x 2 x $(json_field max_sm_clock_mhz) MHz max SM clock, $(json_field name)"
step_log "GPU $(json_field name), $arch, FP32 peak ${peak:-?} GFLOPS"
# The measured tensor-core peaks per dtype (bench/gpu_matrix_peak_main.cc), when the bundle has
# the program: OUT_DIR/matrix_peaks.txt, and the report's peaks unless TUNE_GPU_PEAKS gives them.
matrix_peaks=${TUNE_GPU_PEAKS:-}
peaks_note="given by TUNE_GPU_PEAKS"
if [ -x "$bin/tune-bench-gpu-peak" ]; then
  if timeout 120 "$bin/tune-bench-gpu-peak" >"$out/matrix_peaks.txt" 2>&1; then
    if [ -z "$matrix_peaks" ]; then
      matrix_peaks=$(awk '!/^#/ && $2 ~ /^[0-9]+$/ {printf "%s=%s ", $1, $2}' "$out/matrix_peaks.txt")
      peaks_note="measured by tune-bench-gpu-peak, a loop of mma.sync, and on sm_90 of wgmma m64n256 (where both run, wgmma's, printed last, is the peak)"
    fi
    step_log "matrix peaks (measured): $(grep -v '^#' "$out/matrix_peaks.txt" | awk '{printf "%s %s %s; ", $1, $2, $3}')"
  else
    fail matrix-peaks "$(tail -1 "$out/matrix_peaks.txt")"
  fi
fi

# --- 3. gpu tests ----------------------------------------------------------------------------
tests_deadline=$((SECONDS + tests_budget))
manifest=$bundle/share/tune/gpu-tests.tsv
test_results=()
if [ -f "$manifest" ]; then
  while IFS=$'\t' read -r name kind binary rest; do
    [ -z "$name" ] && continue
    remaining=$((tests_deadline - SECONDS))
    if [ "$remaining" -le 5 ]; then
      test_results+=("$name: not run (tests' time budget spent)")
      continue
    fi
    log=$out/tests/$name.log
    if [ "$kind" = gtest ]; then
      timeout -k 5 "$remaining" "$bin/$binary" --gtest_filter="$rest" \
        --gtest_output="xml:$out/tests/$name.xml" >"$log" 2>&1 </dev/null
    else
      IFS=$'\t' read -ra args <<<"$rest"
      args=("${args[@]//@BIN@/$bin}")
      timeout -k 5 "$remaining" "$bin/$binary" "${args[@]}" >"$log" 2>&1 </dev/null
    fi
    rc=$?
    summary=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$log" | tr '\n' ' ')
    case $rc in
      0) test_results+=("$name: ok $summary") ;;
      77) test_results+=("$name: skipped") ;;
      124 | 137) test_results+=("$name: TIMEOUT") && fail "test $name" timeout ;;
      *) test_results+=("$name: FAILED (exit $rc) $summary") && fail "test $name" "exit $rc" ;;
    esac
  done <"$manifest"
  [ ${#test_results[@]} -eq 0 ] && test_results+=("(the bundle lists no gpu tests)")
else
  fail tests "no $manifest"
fi

# --- 4. daemon -------------------------------------------------------------------------------
step_log "starting tune-daemon"
rm -f "$out/daemon.port"
"$bin/tune-daemon" --db "$out/tuning.db" --listen 127.0.0.1:0 --port-file "$out/daemon.port" \
  --local-workers 1 --local-worker-arg="--device=$device" --local-worker-arg="--libs=$libs" \
  >"$out/daemon.log" 2>&1 </dev/null &
daemon_pid=$!
for _ in $(seq 1 60); do
  [ -s "$out/daemon.port" ] && break
  kill -0 "$daemon_pid" 2>/dev/null || break
  sleep 0.5
done
daemon=
if [ -s "$out/daemon.port" ]; then
  daemon=127.0.0.1:$(tr -d '[:space:]' <"$out/daemon.port")
  step_log "daemon at $daemon"
else
  fail daemon "$(tail -3 "$out/daemon.log")"
fi
client() { "$bin/tune-client" --daemon "$daemon" "$@"; }
# The worker registers shortly after the daemon listens; jobs queue until it does.
if [ -n "$daemon" ]; then
  for _ in $(seq 1 20); do
    client workers >"$out/workers.txt" 2>&1 && grep -qi cuda "$out/workers.txt" && break
    sleep 0.5
  done
  if ! grep -qi cuda "$out/workers.txt"; then
    fail worker "no cuda worker registered: $(grep -v '^20' "$out/daemon.log" | tail -2)"
    worker_missing=1
  fi
  client workers --json >"$out/workers.json" 2>&1
fi

# --- 5. tuning -------------------------------------------------------------------------------
target="cuda -arch=$arch -libs=$libs"
reserve=45  # seconds kept for cancelling, export, report and summary
jobs=()
if [ -n "$daemon" ] && [ -z "${worker_missing:-}" ]; then
  while read -r workload; do
    workload=${workload%%#*}
    workload=$(echo "$workload" | tr -d '[:space:]')
    [ -z "$workload" ] && continue
    # shellcheck disable=SC2046  # one --template per name, split into words
    if id=$(client submit --workload "$workload" --target "$target" --trials "$trials" \
      --strategy "$strategy" --name "gpu-session" $(template_args "$workload") \
      2>>"$out/submit.log"); then
      jobs+=("$id $workload")
      echo "job $id: $workload" >>"$out/submit.log"
    else
      fail "submit $workload" "$(tail -1 "$out/submit.log")"
    fi
  done < <(grep -v '^\s*#' "$workloads_file")
  step_log "submitted ${#jobs[@]} jobs (target '$target', $trials trials each)"
  # Each job gets an equal share of the time left (what an earlier job leaves unused passes on);
  # a job still running when its share is spent is cancelled with the trials it has, so every
  # workload is measured before the deadline.
  pending=${#jobs[@]}
  for entry in "${jobs[@]}"; do
    id=${entry%% *}
    remaining=$(($(left) - reserve))
    if [ "$remaining" -le 0 ]; then
      break
    fi
    share=$((remaining / pending))
    pending=$((pending - 1))
    timeout -k 5 "$((share > 1 ? share : 1))" "$bin/tune-client" --daemon "$daemon" watch "$id" \
      >>"$out/watch.log" 2>&1 </dev/null
    if grep -qiE 'queued|running' <<<"$(client status "$id" 2>&1)"; then
      client cancel "$id" >>"$out/cancel.log" 2>&1
      step_log "job $id (${entry#* }): its share of ${share}s is spent: cancelled"
    fi
    step_log "job $id (${entry#* }): $(client status "$id" 2>&1 | head -1)"
  done
  cancelled=0
  for entry in "${jobs[@]}"; do
    id=${entry%% *}
    state=$(client status "$id" 2>&1)
    if grep -qiE 'queued|running' <<<"$state"; then
      client cancel "$id" >>"$out/cancel.log" 2>&1 && cancelled=$((cancelled + 1))
    fi
  done
  [ "$cancelled" -gt 0 ] && step_log "deadline: cancelled $cancelled unfinished jobs"
  client jobs >"$out/jobs.txt" 2>&1
fi

# --- 6. export -------------------------------------------------------------------------------
if [ -n "$daemon" ]; then
  client export --out "$out/export.jsonl" --include-failures >"$out/export.log" 2>&1 ||
    fail export "$(tail -1 "$out/export.log")"
else
  fail export "no daemon"
fi
kill "$daemon_pid" 2>/dev/null
for _ in $(seq 1 20); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.25; done
kill -9 "$daemon_pid" 2>/dev/null
wait "$daemon_pid" 2>/dev/null

# --- 7. report -------------------------------------------------------------------------------
if [ -s "$out/export.jsonl" ]; then
  peak_args=()
  for p in $matrix_peaks; do peak_args+=(--peak "$p"); done
  python3 "$repo/bench/gpu_report.py" "$out/export.jsonl" --workloads "$workloads_file" \
    --peak-gflops "${peak:-0}" --peak-note "$peak_note" --trials "$trials" "${peak_args[@]}" \
    --peaks-note "$peaks_note" \
    --title "tune on $(json_field name) ($arch), target '$target'" \
    --out "$out/report.md" >/dev/null 2>"$out/report.log" || fail report "$(tail -1 "$out/report.log")"
else
  fail report "no export"
fi

# --- 8. summary ------------------------------------------------------------------------------
echo
echo "=== gpu-session summary ($((SECONDS - started)) s) ==="
echo "GPU: $(json_field name) $arch; peak ${peak:-?} GFLOPS (theoretical); trials per workload: $trials"
echo "--- tests"
printf '%s\n' "${test_results[@]}"
echo "--- jobs"
tail -n 25 "$out/jobs.txt" 2>/dev/null
if [ -s "$out/report.md" ]; then
  echo "--- report (OUT_DIR/report.md)"
  # Compact: workload, tune us, GFLOPS, % peak, library us, GFLOPS, % peak, ratio, records.
  grep '^| ' "$out/report.md" | cut -d'|' -f2-10 | tail -n 25
fi
echo "--- files: $(cd "$out" && ls | tr '\n' ' ')"
if [ ${#failed[@]} -eq 0 ]; then
  echo "all steps OK"
else
  echo "FAILED steps: ${failed[*]}"
fi
exit 0
