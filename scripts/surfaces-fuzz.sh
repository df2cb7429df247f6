#!/usr/bin/env bash
# The network doors under attack, again (issue 33): runs the suites that hold its cases (the web server's slow and
# tokenless clients, exports, a hostile MQTT broker, hostile or failing PostgreSQL servers and copied stores, the
# central data the CLI reads, the athlete rule, privacy, hostile configuration and control-API input) against the
# release build of systoled, systole and systole-sim, and reports every systoled's peak resident memory (VmHWM,
# sampled every 50 ms) and how each ended. Fails if a test fails, a systoled trapped (SIGILL, SIGTRAP, SIGABRT,
# SIGBUS, SIGSEGV) or any peaked at 64 MiB or more. Not part of the test command (it builds a release); run it by
# hand after a change to a door, and put its table in docs/reliability.md.
#
# usage: scripts/surfaces-fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
limit_kib=$((64 * 1024))

echo "surfaces-fuzz: building the tests (debug) and systoled, systole, systole-sim (release, in .build-release)"
swift build --build-tests -Xswiftc -warnings-as-errors >&2   # as scripts/test.sh builds them
for product in systoled systole systole-sim; do
  swift build -c release --scratch-path .build-release --product "$product" >&2
done
release=$(swift build -c release --scratch-path .build-release --show-bin-path)
debug=$(swift build --show-bin-path)

# The test helpers (probes) from the debug build, the three programs from the release build.
work=$(mktemp -d /tmp/systole-surfaces.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
for file in "$debug"/*; do ln -s "$file" "$work/bin/"; done
for product in systoled systole systole-sim; do ln -sf "$release/$product" "$work/bin/$product"; done
export SYSTOLE_BIN_DIR=$work/bin SYSTOLE_PEAK_LOG=$work/peaks.tsv
: > "$SYSTOLE_PEAK_LOG"

suites='WebPageTests|ExportBoundsTests|ExportEndToEndTests|StreamedExportTests|MQTTHostileBrokerTests|MQTTTests'
suites+='|CentralOptionsTests|TeamSessionTests|PrivacyTests|HostileConfigurationTests|ControlAPIInputTests'
# In process, without systoled: the athlete rule and the error excerpts.
suites+='|WorkoutManagerTests|ExcerptTests'
status=0
started=$(date +%s)
swift test --skip-build --filter "$suites" > "$work/doors.log" 2>&1 || status=1
# Apart, as in the test command: the replication suites run PostgreSQL and several receivers each.
swift test --skip-build --filter ReplicationTests > "$work/replication.log" 2>&1 || status=1
grep -hE "^✘|Test run with" "$work/doors.log" "$work/replication.log" || true
echo "surfaces-fuzz: the suites took $(( $(date +%s) - started )) s"

python3 - "$SYSTOLE_PEAK_LOG" "$limit_kib" <<'PY' || status=1
import collections, sys
# Per process (its pid): the highest peak it reported and its last word on how it ended.
processes = {}
for line in open(sys.argv[1]):
    fields = line.rstrip("\n").split("\t")
    if len(fields) != 4:
        continue
    pid, folder, peak, how = fields
    old = processes.get(pid, (folder, 0, how))
    processes[pid] = (folder, max(old[1], int(peak)), how)
rows = list(processes.values())
limit = int(sys.argv[2])
by_folder = collections.defaultdict(list)
for folder, peak, how in rows:
    # The folder a test gave systoled, less the temporary directory.
    by_folder[folder.replace("/tmp/", "").rstrip("/")].append((peak, how))
traps = [r for r in rows if r[2] in ("signal 4", "signal 5", "signal 6", "signal 7", "signal 11")]
print(f"\n{'systoled (its folder)':<60} {'runs':>5} {'peak MiB':>9}  ends")
for folder, runs in sorted(by_folder.items(), key=lambda item: -max(p for p, _ in item[1])):
    ends = ", ".join(f"{n}× {how}" for how, n in collections.Counter(h for _, h in runs).items())
    print(f"{folder[:60]:<60} {len(runs):>5} {max(p for p, _ in runs) / 1024:>9.1f}  {ends}")
peak = max((r[1] for r in rows), default=0)
print(f"\n{len(rows)} systoled processes; highest peak {peak / 1024:.1f} MiB (limit {limit / 1024:.0f} MiB); "
      f"{len(traps)} trapped")
sys.exit(0 if rows and peak < limit and not traps else 1)
PY
[ "$status" = 0 ] && echo "surfaces-fuzz: passed" || echo "surfaces-fuzz: FAIL (logs in $work, kept)" >&2
[ "$status" = 0 ] || trap - EXIT
exit "$status"
