#!/usr/bin/env bash
# Soak: one strata-server under a steady mixed load for minutes, printed
# interval by interval: throughput, p99, server CPU time per request,
# resident memory, open descriptors. A cost that grows with the server's
# age (a cache without a bound, a leak, work that piles up per event-loop
# turn) shows as a rising column. The last lines compare the median of the
# last three intervals with that of the first three (after a warm-up).
#
#   bash Tools/benchmark/soak.sh
#
# Environment: MINUTES (default 3), INTERVAL (seconds, default 10), MIX
# (default get=70,query=15,insert=10,count=5), CONNECTIONS (default 20),
# LOOPS (event-loop threads, default 1), MAX_GROWTH (e.g. 1.3: exit 1 when
# the CPU per request grew by more than that factor; unset: only print),
# SERVER_BIN (another strata-server build to soak; default: this tree's),
# SERVER_FLAGS (more strata-server options, e.g. "--row-cache 0").
# Inserts grow the store, so memory grows with them (the page cache and the
# row cache fill up to their bounds); CPU per request should not.
set -euo pipefail
cd "$(dirname "$0")/../.."

MINUTES=${MINUTES:-3}
INTERVAL=${INTERVAL:-10}
MIX=${MIX:-get=70,query=15,insert=10,count=5}
CONNECTIONS=${CONNECTIONS:-20}
LOOPS=${LOOPS:-1}
PORT=${STRATA_PORT:-7495}
WORK=$(mktemp -d /tmp/strata-soak.XXXXXX)
SERVER_PID=""
cleanup() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

swift build -c release --product strata-server >&2
swift build -c release --product strata-bench >&2
BIN=$(swift build -c release --show-bin-path)

"${SERVER_BIN:-$BIN/strata-server}" --port "$PORT" --data-dir "$WORK/data" --empty --log-level warning \
    --idle-timeout 0 --event-loop-threads "$LOOPS" ${SERVER_FLAGS:-} > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
"$BIN/strata-bench" --workload books --port "$PORT" --dataset 10000 --feedback-per-book 1 -n 1 --mix count=1 > /dev/null
# Warm-up: the row cache and the plans fill before the first interval.
"$BIN/strata-bench" --workload books --port "$PORT" --driver wire --threads 1 -d 5s -c "$CONNECTIONS" --mix "$MIX" > /dev/null

ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }
rss() { awk '/^VmRSS/ {print $2}' "/proc/$SERVER_PID/status"; }
intervals=$(( MINUTES * 60 / INTERVAL ))
[ "$intervals" -ge 6 ] || intervals=6
echo "strata-server soak: $intervals intervals of ${INTERVAL}s, mix $MIX, $CONNECTIONS connections, $LOOPS event-loop thread(s)"
printf '%8s %10s %9s %14s %10s %6s\n' "second" "req/s" "p99 ms" "CPU/req (us)" "RSS MiB" "fds"
: > "$WORK/rows"
for i in $(seq "$intervals"); do
    before=$(ticks)
    "$BIN/strata-bench" --workload books --port "$PORT" --driver wire --threads 1 -d "${INTERVAL}s" \
        -c "$CONNECTIONS" --mix "$MIX" --json --out "$WORK/interval.json" > /dev/null
    after=$(ticks)
    fds=$(ls "/proc/$SERVER_PID/fd" | wc -l)
    python3 - "$WORK/interval.json" "$before" "$after" "$(rss)" "$fds" "$(( i * INTERVAL ))" >> "$WORK/rows" <<'PY'
import json, os, sys
report = json.load(open(sys.argv[1]))
requests = max(1, report["requests"])
cpu = (int(sys.argv[3]) - int(sys.argv[2])) / os.sysconf("SC_CLK_TCK") * 1e6 / requests
print(sys.argv[6], round(report["throughputRps"]), report["latencyMs"]["p99"], round(cpu, 1), round(int(sys.argv[4]) / 1024, 1), sys.argv[5])
PY
    tail -n 1 "$WORK/rows" | awk '{printf "%8s %10s %9s %14s %10s %6s\n", $1, $2, $3, $4, $5, $6}'
done

python3 - "$WORK/rows" "${MAX_GROWTH:-}" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1]) if line.strip()]
def median(column, part):
    return statistics.median(float(row[column]) for row in part)
first, last = rows[:3], rows[-3:]
cpu = median(3, last) / median(3, first)
rss = median(4, last) - median(4, first)
print(f"CPU per request, last three intervals over first three (medians): {cpu:.2f}x")
print(f"resident memory, last three over first three (medians): {rss:+.1f} MiB")
limit = sys.argv[2]
if limit and cpu > float(limit):
    print(f"CPU per request grew by more than {limit}x", file=sys.stderr)
    sys.exit(1)
PY
