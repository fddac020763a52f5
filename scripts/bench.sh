#!/usr/bin/env bash
# Replays whole traces under FCFS and EASY and prints, per run, the whole-process wall time
# (the median of BENCH_RUNS runs, default 11: run-to-run noise here is a few ms), jobs/s over
# that time, peak resident memory, and peak memory per job above a one-job baseline run. Builds with the bench-release profile (the release profile:
# fat LTO, one codegen unit), or the profile named by BENCH_PROFILE.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=${BENCH_PROFILE:-bench-release}
runs=${BENCH_RUNS:-11}
cargo build --quiet --profile "$profile" -p placesim-cli
bin=target/$profile/placesim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

shared=../shared/traces
traces=(workloads/KTH-SP2-1996-2.1-cln.swf.gz "$shared/CTC-SP2-1996-3.1-cln.swf.gz" "$shared/HPC2N-2002-2.2-cln.swf.gz")
for extra in ${BENCH_EXTRA:-}; do traces+=("$extra"); done

# The peak memory of a run with a single job: binary, libraries, polars' buffers.
printf '; MaxProcs: 1\n1 0 -1 1 1 -1 -1 1 1 -1 1 1 1 -1 1 -1 -1 -1\n' > "$tmp/one.swf"
peak_mib() { sed -n 's/.*peak memory \([0-9.]*\) MiB.*/\1/p' "$1" | tail -1; }
"$bin" run --trace "$tmp/one.swf" --policy easy --out "$tmp/one" > /dev/null 2> "$tmp/one.err"
baseline=$(peak_mib "$tmp/one.err")

printf '%-28s %-6s %8s %10s %12s %10s %12s\n' trace policy jobs "wall (s)" "jobs/s" "peak MiB" "bytes/job"
for trace in "${traces[@]}"; do
  if [ ! -f "$trace" ]; then
    echo "skipped: $trace is absent (../shared/traces is not beside the project)"
    continue
  fi
  name=$(basename "$trace" .swf.gz)
  for policy in fcfs easy; do
    walls=()
    for _ in $(seq 1 "$runs"); do
      start=$(date +%s%N)
      "$bin" run --trace "$trace" --policy "$policy" --out "$tmp/$name-$policy" > /dev/null 2> "$tmp/err"
      end=$(date +%s%N)
      walls+=("$(( (end - start) / 1000 ))")
    done
    wall_us=$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
    jobs=$(sed -n 's/.* under [a-z]*: \([0-9]*\) jobs.*/\1/p' "$tmp/err")
    peak=$(peak_mib "$tmp/err")
    awk -v n="$name" -v p="$policy" -v j="$jobs" -v w="$wall_us" -v pk="$peak" -v b="$baseline" 'BEGIN {
      printf "%-28s %-6s %8d %10.3f %12.0f %10.1f %12.0f\n", n, p, j, w / 1e6, j / (w / 1e6), pk, (pk - b) * 1048576 / j
    }'
  done
done
echo "baseline (one-job run): $baseline MiB"
