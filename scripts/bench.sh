#!/usr/bin/env bash
# Whole-process benchmarks, each side by side with the naive count-based reference
# (scripts/count_easy.py, Python) in the same run, as issue 20 asks:
#
# 1. KTH-SP2, CTC-SP2 and HPC2N under FCFS and EASY (and CEA-Curie under EASY, one vnode per
#    processor), replayed from their SWF files;
# 2. psets-bench's 100,000 jobs on 16,384 one-ncpu vnodes: as an SWF trace under plain EASY,
#    then scenarios/psets-bench.toml (PBS placement sets) and scenarios/nodesets-bench.toml
#    (Moab node sets), each against the count-based schedule of the same jobs;
# 3. conservative backfilling on CTC-SP2 against EASY, and PBS fairshare (scenarios/ctc-fairshare.toml)
#    against the same run in submission order (scenarios/ctc-easy.toml), then with a binding
#    per-user max_run (ctc-maxrun.toml), both (ctc-maxrun-fairshare.toml) and Moab's per-user
#    MAXJOB (ctc-maxjob.toml) against it too.
#
# Per run: the whole-process wall time (the median of BENCH_RUNS runs, default 5; the
# reference's of BENCH_REF_RUNS, default 3), jobs/s over that time, peak resident memory, peak
# memory per job above a one-job baseline run, the reference's time, the ratio (reference time
# / placesim's time: above 1, placesim is faster), and whether the reference's mean wait equals
# placesim's (it must, where both replay the same schedule). BENCH_QUICK=1 leaves out CEA-Curie
# and section 2. Builds with the bench-release profile (the release profile: fat LTO, one codegen
# unit), or the profile named by BENCH_PROFILE, into CARGO_TARGET_DIR if set (else target/).
set -euo pipefail
cd "$(dirname "$0")/.."

profile=${BENCH_PROFILE:-bench-release}
runs=${BENCH_RUNS:-5}
ref_runs=${BENCH_REF_RUNS:-3}
quick=${BENCH_QUICK:-0}
cargo build --quiet --profile "$profile" -p placesim-cli
bin=${CARGO_TARGET_DIR:-target}/$profile/placesim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shared=../shared/traces

# The median wall time, in microseconds, of `n` runs of a command; its last run's stdout and
# stderr are left in $tmp/out and $tmp/err.
median_us() {
  local n=$1
  shift
  local walls=()
  for _ in $(seq 1 "$n"); do
    local start end
    start=$(date +%s%N)
    "$@" > "$tmp/out" 2> "$tmp/err"
    end=$(date +%s%N)
    walls+=("$(( (end - start) / 1000 ))")
  done
  printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(( (n + 1) / 2 ))p"
}

# The peak memory of a run with a single job: binary, libraries, polars' buffers.
printf '; MaxProcs: 1\n1 0 -1 1 1 -1 -1 1 1 -1 1 1 1 -1 1 -1 -1 -1\n' > "$tmp/one.swf"
peak_mib() { sed -n 's/.*peak memory \([0-9.]*\) MiB.*/\1/p' "$1" | tail -1; }
"$bin" run --trace "$tmp/one.swf" --policy easy --out "$tmp/one" > /dev/null 2> "$tmp/one.err"
baseline=$(peak_mib "$tmp/one.err")

header() {
  printf '%-26s %-13s %8s %9s %10s %9s %10s %9s %7s %6s\n' "$1" policy jobs "wall (s)" "jobs/s" "peak MiB" \
    "bytes/job" "ref (s)" ratio "same"
}

# One row: placesim with `args` (a trace or a scenario) against the reference on `ref_trace`.
# `same` is checked only when `compare_waits` is 1 (the same schedule is replayed).
declare -A ref_walls ref_waits
row() {
  local label=$1 policy=$2 ref_trace=$3 ref_policy=$4 compare_waits=$5
  shift 5
  local wall jobs peak wait ref_wall ref_wait same
  wall=$(median_us "$runs" "$bin" run "$@" --out "$tmp/run")
  jobs=$(sed -n 's/.* under [a-z+-]*: \([0-9]*\) jobs.*/\1/p' "$tmp/err")
  peak=$(peak_mib "$tmp/err")
  wait=$(awk 'NR == 2 { print $5 }' "$tmp/out")
  # The reference is timed once per trace and policy: the three rows of psets-bench's jobs
  # share one.
  local key="$ref_trace $ref_policy"
  if [ -z "${ref_walls[$key]:-}" ]; then
    ref_walls[$key]=$(median_us "$ref_runs" python3 scripts/count_easy.py "$ref_trace" --policy "$ref_policy")
    ref_waits[$key]=$(sed -n 's/.*mean wait \([0-9.]*\) s.*/\1/p' "$tmp/out")
  fi
  ref_wall=${ref_walls[$key]}
  ref_wait=${ref_waits[$key]}
  same="-"
  if [ "$compare_waits" = 1 ]; then
    if [ "$wait" = "$ref_wait" ]; then same=yes; else same="NO($wait/$ref_wait)"; fi
  fi
  awk -v l="$label" -v p="$policy" -v j="$jobs" -v w="$wall" -v pk="$peak" -v b="$baseline" \
    -v r="$ref_wall" -v s="$same" 'BEGIN {
      printf "%-26s %-13s %8d %9.3f %10.0f %9.1f %10.0f %9.3f %6.1fx %6s\n", l, p, j, w / 1e6, j / (w / 1e6), pk,
        (pk - b) * 1048576 / j, r / 1e6, r / w, s
    }'
}

header trace
traces=(workloads/KTH-SP2-1996-2.1-cln.swf.gz "$shared/CTC-SP2-1996-3.1-cln.swf.gz" "$shared/HPC2N-2002-2.2-cln.swf.gz")
for extra in ${BENCH_EXTRA:-}; do traces+=("$extra"); done
for trace in "${traces[@]}"; do
  if [ ! -f "$trace" ]; then
    echo "skipped: $trace is absent (../shared/traces is not beside the project)"
    continue
  fi
  name=$(basename "$trace" .swf.gz)
  for policy in fcfs easy; do
    row "$name" "$policy" "$trace" "$policy" 1 --trace "$trace" --policy "$policy"
  done
done
curie="$shared/CEA-Curie-2011-2.1-cln.swf.gz"
if [ "$quick" != 1 ] && [ -f "$curie" ]; then
  row CEA-Curie-2011-2.1-cln easy "$curie" easy 1 --trace "$curie" --policy easy
fi

if [ "$quick" != 1 ]; then
  echo
  echo "psets-bench's jobs (16,384 one-ncpu vnodes); the reference replays them count-based under EASY"
  header workload
  "$bin" gen --scenario scenarios/psets-bench.toml --out "$tmp/psets.swf" > /dev/null 2>&1
  row "psets-bench as SWF" easy "$tmp/psets.swf" easy 1 --trace "$tmp/psets.swf" --policy easy
  row psets-bench.toml easy+pbs "$tmp/psets.swf" easy 0 --scenario scenarios/psets-bench.toml
  row nodesets-bench.toml easy+moab "$tmp/psets.swf" easy 0 --scenario scenarios/nodesets-bench.toml
fi

ctc="$shared/CTC-SP2-1996-3.1-cln.swf.gz"
if [ -f "$ctc" ]; then
  easy_us=$(median_us "$runs" "$bin" run --trace "$ctc" --policy easy --out "$tmp/run")
  conservative_us=$(median_us "$runs" "$bin" run --trace "$ctc" --policy conservative --out "$tmp/run")
  echo
  awk -v e="$easy_us" -v c="$conservative_us" 'BEGIN {
    printf "CTC-SP2: conservative %.3f s, EASY %.3f s: conservative takes %.2fx EASY'"'"'s time\n", c / 1e6, e / 1e6, c / e
  }'
  # Issue 17: PBS fairshare (one group per user), and each binding limit (PBS's per-user
  # max_run, it with fairshare, Moab's per-user MAXJOB), against the same run in submission
  # order.
  plain_us=$(median_us "$runs" "$bin" run --scenario scenarios/ctc-easy.toml --out "$tmp/run")
  for variant in ctc-fairshare ctc-maxrun ctc-maxrun-fairshare ctc-maxjob; do
    variant_us=$(median_us "$runs" "$bin" run --scenario "scenarios/$variant.toml" --out "$tmp/run")
    awk -v p="$plain_us" -v v="$variant_us" -v n="$variant" 'BEGIN {
      printf "CTC-SP2: %s %.3f s, submission order %.3f s: it takes %.2fx its time\n", n, v / 1e6, p / 1e6, v / p
    }'
  done
fi
echo "baseline (one-job run): $baseline MiB"
