#!/usr/bin/env bash
# Runs the test command (scripts/test.sh) while busy loops keep every core busy, so anyone can reproduce a loaded
# machine: the suite must pass there too. Each run's result and time go to stdout and to the summary at the end.
#
# usage: scripts/stress-suite.sh [--runs N] [--hogs N] [--idle-runs N] [--clone] [--stop-on-failure]
#   --runs N   run the test command N times in a row with the busy loops (default 1)
#   --hogs N   busy loops beside it (default: one per core, `nproc`); 0 runs it on an otherwise idle machine
#   --idle-runs N  first run it N times on an otherwise idle machine (the same clone: one build for all)
#   --clone    run in a fresh clone of this checkout's HEAD (in a temporary folder, as CI does), not here
#   --stop-on-failure  stop after the first failed run
# The busy loops run at the tests' own priority and stop when the script ends, however it ends. A failed run's log
# is kept as /tmp/systole-stress-failed-run-N.log; with --clone the clone is kept too (its core files, if any).
# Exit status: 0 when every run passed.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=1
idle_runs=0
hogs=$(nproc)
clone=false
stop_on_failure=false
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift ;;
    --idle-runs) idle_runs=$2; shift ;;
    --hogs) hogs=$2; shift ;;
    --clone) clone=true ;;
    --stop-on-failure) stop_on_failure=true ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "stress-suite: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ "$runs" =~ ^[0-9]+$ ]] || { echo "stress-suite: --runs takes a whole number, not '$runs'" >&2; exit 2; }
[[ "$idle_runs" =~ ^[0-9]+$ ]] || { echo "stress-suite: --idle-runs takes a whole number, not '$idle_runs'" >&2; exit 2; }
[ $((runs + idle_runs)) -gt 0 ] || { echo "stress-suite: nothing to run (--runs 0 and no --idle-runs)" >&2; exit 2; }
[[ "$hogs" =~ ^[0-9]+$ ]] && [ "$hogs" -le 64 ] || {
  echo "stress-suite: --hogs takes a whole number from 0 to 64, not '$hogs'" >&2
  exit 2
}

hog_pids=()
work=""
stop_hogs() {
  for pid in "${hog_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${hog_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  hog_pids=()
}
keep_clone=false
cleanup() {
  stop_hogs
  if $keep_clone; then
    echo "stress-suite: the clone is kept for the failed run's logs and any core file: $work"
  elif [ -n "$work" ]; then
    rm -rf "$work"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A test process that crashes leaves a core file in its working directory (the clone, kept after a failure) where
# the kernel's core_pattern allows it.
ulimit -c unlimited 2>/dev/null || true

here=$PWD
if $clone; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/systole-stress.XXXXXX")
  git clone -q "$here" "$work/systole"
  here="$work/systole"
  echo "stress-suite: a fresh clone of $(git -C "$here" rev-parse --short HEAD) in $here"
fi

start_hogs() {
  for _ in $(seq 1 "$hogs"); do
    (while :; do :; done) &
    hog_pids+=($!)
  done
}

results=()
failed=0
total=$((idle_runs + runs))
for run in $(seq 1 "$total"); do
  if [ "$run" -le "$idle_runs" ]; then
    kind="idle"
  else
    kind="$hogs busy loop(s)"
    if [ "$run" = $((idle_runs + 1)) ]; then
      start_hogs
      echo "stress-suite: $hogs busy loop(s) beside the test command on $(nproc) core(s) from here on"
    fi
  fi
  log="$here/.build-stress-run-$run.log"
  [ "$here" != "$PWD" ] || log=$(mktemp "${TMPDIR:-/tmp}/systole-stress-run-$run.XXXXXX.log")
  started=$(date +%s)
  echo "== run $run of $total, $kind (log: $log)"
  set +e
  (cd "$here" && bash scripts/test.sh) >"$log" 2>&1
  status=$?
  set -e
  seconds=$(($(date +%s) - started))
  # Swift Testing's own summary lines: "Test run with N tests ... passed/failed".
  # A run that never reached a summary (a crash, a failed build) has none: said so below, never an exit here.
  summary=$(grep -E "Test run with [0-9]+ tests" "$log" | sed 's/^.*Test run/Test run/' | paste -sd ';' - || true)
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  if [ "$status" = 0 ]; then verdict=passed; else verdict="FAILED (exit $status)"; failed=$((failed + 1)); fi
  line="run $run ($kind): $verdict in $((seconds / 60)) min $((seconds % 60)) s; load $load; ${summary:-no test summary}"
  echo "$line"
  if [ "$status" != 0 ]; then
    grep -E "✘|failed|FAILED|error:" "$log" | grep -v "^\s*$" | head -40 | sed 's/^/    /' || true
    [ "$here" = "$PWD" ] || cp "$log" "${TMPDIR:-/tmp}/systole-stress-failed-run-$run.log"
    [ -z "$work" ] || keep_clone=true
  fi
  results+=("$line")
  if [ "$status" != 0 ] && $stop_on_failure; then break; fi
done

echo "== summary: $((${#results[@]} - failed)) of ${#results[@]} run(s) passed"
printf '%s\n' "${results[@]}"
[ "$failed" = 0 ]
