#!/usr/bin/env bash
# fuzz/run.sh [SECONDS]: builds podsim's libFuzzer targets (clang, ASan + UBSan) and runs each for SECONDS
# (default 60). Exits 1 on any finding: a crash, a sanitizer report, an exception other than InputError, a timeout
# (-timeout=10 s per input) or an out-of-memory (-rss_limit_mb=2048); the inputs are saved under
# fuzz/findings/<target>/ (minimize one with: build-fuzz/fuzz/fuzz_<target> -minimize_crash=1 -runs=10000 FILE, then
# keep it as tests/fuzz_regressions/<target>/NAME.json).
# Environment: PODSIM_FUZZ_BUILD (build folder, default build-fuzz), PODSIM_FUZZ_JOBS (build jobs, default nproc),
# PODSIM_FUZZ_TARGETS (default "scenario published_run sweep claim"), PODSIM_FUZZ_KEEP_GOING=1 (collect every
# finding in the time instead of stopping at the first: libFuzzer's -fork=1 -ignore_crashes/ooms/timeouts).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
build=${PODSIM_FUZZ_BUILD:-build-fuzz}
targets=${PODSIM_FUZZ_TARGETS:-scenario published_run sweep claim}
command -v clang++ >/dev/null || { echo "fuzz: clang++ not found (Debian: apt-get install clang libclang-rt-14-dev)" >&2; exit 2; }
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DPODSIM_FUZZ=ON -DPODSIM_NO_CUDA=ON >/dev/null
cmake --build "$build" --target fuzz -j"${PODSIM_FUZZ_JOBS:-$(nproc)}" >/dev/null
corpus=$build/fuzz-corpus
bash fuzz/seed_corpus.sh "$corpus"
stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT
mode=()
[[ ${PODSIM_FUZZ_KEEP_GOING:-0} == 1 ]] && mode=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1)
status=0
for t in $targets; do
  mkdir -p "fuzz/findings/$t"
  log=$build/fuzz-$t.log
  rc=0
  # detect_leaks=0: a leak is not a contract breach here, and LeakSanitizer cannot run under ptrace-restricted CI.
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} "$build/fuzz/fuzz_$t" "${mode[@]}" -max_total_time="$secs" \
    -rss_limit_mb=2048 -timeout=10 -dict=fuzz/json.dict -artifact_prefix="fuzz/findings/$t/" -print_final_stats=1 \
    "$corpus/$t" >"$log" 2>&1 || rc=$?
  execs=$(grep -E '^stat::number_of_executed_units' "$log" | tail -1 | awk '{print $2}' || true)
  speed=$(grep -E '^stat::average_exec_per_sec' "$log" | tail -1 | awk '{print $2}' || true)
  if [[ -z $execs ]]; then  # fork mode prints no stat:: lines; its last status line has the totals
    last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    execs=$(sed -E 's/^#([0-9]+).*/\1/' <<<"$last")
    speed=$(sed -nE 's/.*exec\/s:? ([0-9]+).*/\1/p' <<<"$last")
  fi
  found=$(find "fuzz/findings/$t" -type f -newer "$stamp" | wc -l)
  echo "fuzz_$t: ${execs:-?} executions in ${secs} s (${speed:-?}/s), $found finding(s), libFuzzer exit $rc (log: $log)"
  if ((found > 0 || rc != 0)); then
    status=1
    grep -E 'podsim fuzz finding|^SUMMARY|ERROR: libFuzzer|runtime error' "$log" | sort | uniq -c | sort -rn | head -20 || true
    find "fuzz/findings/$t" -type f -newer "$stamp" | head -20
  fi
done
exit $status
