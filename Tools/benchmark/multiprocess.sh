#!/usr/bin/env bash
# Many processes on one store (issue 7's figures), in one run:
#   1. insert throughput with 1, 2 and 4 strata-server processes on one data
#      directory, each loaded by its own strata-bench (insert only), summed,
#      with the ratio to one process;
#   2. cross-process notification latency: strata-bench inserts through
#      server A while subscribed on server B (--watch-port); p50/p99 from
#      each insert's acknowledgement to B's notification.
#
# Environment: DURATION (default 10s), CONNECTIONS per bench (default 16),
# NOTIFY_RPS (default 500), BASE_PORT (default 7520).
set -euo pipefail
cd "$(dirname "$0")/../.."

DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-16}
NOTIFY_RPS=${NOTIFY_RPS:-500}
BASE_PORT=${BASE_PORT:-7520}
WORK=$(mktemp -d /tmp/strata-multiprocess.XXXXXX)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]:-}"; do [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

echo "building release…" >&2
swift build -c release --product strata-server >&2
swift build -c release --product strata-bench >&2
BIN=$(swift build -c release --show-bin-path)
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {'d': d}))" "$1" "$2"; }

start_servers() { # $1 data dir, $2 count
    SERVER_PIDS=()
    for i in $(seq 0 $(($2 - 1))); do
        port=$((BASE_PORT + i))
        "$BIN/strata-server" --port "$port" --data-dir "$1" --empty --log-level warning --idle-timeout 0 \
            --history-consumer "bench-$i" > "$WORK/server-$i.log" 2>&1 &
        SERVER_PIDS+=($!)
        PIDS+=($!)
        for _ in $(seq 100); do
            (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
            sleep 0.1
        done
    done
}
stop_servers() {
    for pid in "${SERVER_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
}

echo "| writer processes | inserts/s (sum) | per process | vs 1 process |"
echo "|---|---|---|---|"
single=""
for n in 1 2 4; do
    data="$WORK/data-$n"
    start_servers "$data" "$n"
    bench_pids=()
    for i in $(seq 0 $((n - 1))); do
        "$BIN/strata-bench" --workload books --port $((BASE_PORT + i)) -c "$CONNECTIONS" -d "$DURATION" --mix insert=100 --json \
            > "$WORK/bench-$n-$i.json" 2> "$WORK/bench-$n-$i.err" &
        bench_pids+=($!)
    done
    for pid in "${bench_pids[@]}"; do wait "$pid"; done
    stop_servers
    total=0
    errors=0
    for i in $(seq 0 $((n - 1))); do
        # Acknowledged inserts only: a refused request is no throughput.
        total=$(python3 -c "print($total + $(json "$WORK/bench-$n-$i.json" "d['ok'] / d['durationSeconds']"))")
        errors=$((errors + $(json "$WORK/bench-$n-$i.json" "sum(d['errors'].values())")))
    done
    [ -z "$single" ] && single=$total
    printf '| %d | %.0f | %.0f | %.2f× |\n' "$n" "$total" "$(python3 -c "print($total / $n)")" "$(python3 -c "print($total / $single)")"
    [ "$errors" -eq 0 ] || echo "  ($errors errors)"
done

echo
data="$WORK/data-notify"
start_servers "$data" 2
"$BIN/strata-bench" --workload books --port "$BASE_PORT" --watch-port $((BASE_PORT + 1)) -c 4 --rps "$NOTIFY_RPS" -d "$DURATION" \
    --mix insert=100 --json > "$WORK/notify.json" 2> "$WORK/notify.err"
stop_servers
echo "| cross-process notification (insert on A → announced by B) | p50 ms | p90 ms | p99 ms | max ms | announced | missing |"
echo "|---|---|---|---|---|---|---|"
echo "| $NOTIFY_RPS inserts/s | $(json "$WORK/notify.json" "d['notification']['latencyMs']['p50']") | $(json "$WORK/notify.json" "d['notification']['latencyMs']['p90']") | $(json "$WORK/notify.json" "d['notification']['latencyMs']['p99']") | $(json "$WORK/notify.json" "d['notification']['latencyMs']['max']") | $(json "$WORK/notify.json" "d['notification']['matched']") | $(json "$WORK/notify.json" "d['notification']['missing']") |"
