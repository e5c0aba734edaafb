#!/usr/bin/env bash
# Side-by-side benchmarks, in one run on one machine (see docs/benchmarks.md):
#   1. embedded: 100k inserts and a predicate+sort fetch vs raw SQLite (C API)
#   2. server vs Redis: get/insert at 50 connections vs redis-benchmark GET/SET
#      -c 50, then pipelined (--concurrency 800 vs -P 16); and, for context,
#      inserts vs SET on a Redis that fsyncs every write (appendfsync always)
#   3. scale: get and query latency with 10k, 100k and 1M objects; server
#      memory with 1,000 idle connections
#   4. security: get and insert with TLS, query and get under a read rule,
#      each beside the same run without, as throughput and as server CPU
#      time per request (from /proc, user + system)
# Prints a table with both sides and the ratio.
#
# Environment: DURATION (default 10s), SCALES (default "10000 100000 1000000"),
# SKIP_EMBEDDED=1, SKIP_REDIS=1, SKIP_SCALE=1, SKIP_SECURITY=1, ROWS (embedded rows, 100000),
# SERVER_LOOPS (strata-server's event-loop threads against Redis, default 1).
#
# Against Redis, each server serves connections on one thread (Redis runs
# commands on one) and each load generator drives them from one thread
# (redis-benchmark's default; strata-bench --threads 1), so on two cores
# neither side's load generator takes the server's core. strata-bench uses
# its wire driver (requests sent from the event loop, answers counted by
# status without decoding the objects), as redis-benchmark does. Each
# Strata run warms up for 3 s first: the row cache then holds the 10,000
# books, as Redis holds its keys (a get of an uncached row reads SQLite).
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10s}
SCALES=${SCALES:-"10000 100000 1000000"}
ROWS=${ROWS:-100000}
WORK=$(mktemp -d /tmp/strata-benchmark.XXXXXX)
REDIS_PORT=${REDIS_PORT:-6391}
STRATA_PORT=${STRATA_PORT:-7491}
PIDS=()
cleanup() {
    for pid in "${PIDS[@]:-}"; do [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

if ! command -v redis-server >/dev/null || ! command -v redis-benchmark >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools
fi

echo "building release…" >&2
swift build -c release --product strata-server >&2
swift build -c release --product strata-bench >&2
swift build -c release --product strata-embedded-bench >&2
BIN=$(swift build -c release --show-bin-path)

ROWS_OUT=()   # "label|strata|baseline|ratio"
row() { ROWS_OUT+=("$1|$2|$3|$4"); }
ratio() { python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print(f'{a/b:.2f}' if b else 'n/a')" "$1" "$2"; }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {'d': d}))" "$1" "$2"; }

SERVER_LOOPS=${SERVER_LOOPS:-1}
start_strata() { # $1 data dir, then extra strata-server options
    local dir=$1; shift
    "$BIN/strata-server" --port "$STRATA_PORT" --data-dir "$dir" --empty --log-level warning --idle-timeout 0 "$@" > "$WORK/server.log" 2>&1 &
    STRATA_PID=$!
    PIDS+=("$STRATA_PID")
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$STRATA_PORT") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "strata-server did not start" >&2; cat "$WORK/server.log" >&2; exit 1
}
stop_strata() { kill "$STRATA_PID" 2>/dev/null || true; wait "$STRATA_PID" 2>/dev/null || true; }

# 1. Embedded
if [ -z "${SKIP_EMBEDDED:-}" ]; then
    echo "embedded: $ROWS rows…" >&2
    "$BIN/strata-embedded-bench" --only embedded --rows "$ROWS" --runs 5 | tee "$WORK/embedded.txt" >&2
    python3 - "$WORK/embedded.txt" > "$WORK/embedded.rows" <<'PY'
import re, sys
for line in open(sys.argv[1]):
    words = line.split()
    if words and words[0] in ("insert", "fetch"):
        numbers = re.findall(r"[0-9]+\.[0-9]+", line)
        if len(numbers) >= 3:
            label = words[0] + ("+history" if "history" in line else "") + ("-vs-raw-deferred-checkpoint" if "checkpointing after" in line else "") + ("@sqlite-default-cache" if "default 2 MB" in line else "")
            print("embedded", label, *numbers[-3:])
PY
    while read -r _ label strata raw r; do
        row "embedded $label ${ROWS} rows (s, lower is better)" "$strata" "$raw (raw SQLite)" "$r"
    done < "$WORK/embedded.rows"
fi

# 2. Server vs Redis
if [ -z "${SKIP_REDIS:-}" ]; then
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --daemonize no > "$WORK/redis.log" 2>&1 &
    PIDS+=("$!")
    sleep 0.5
    start_strata "$WORK/data-redis" --event-loop-threads "$SERVER_LOOPS"
    "$BIN/strata-bench" --workload books --port "$STRATA_PORT" --dataset 10000 --feedback-per-book 1 -n 1 --mix count=1 > /dev/null
    # Redis gets data too: GETs then find (almost) every key, as Strata's do.
    redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -c 50 -n 400000 -t set -d 200 -r 100000 -q > /dev/null
    # Gets first, both modes, on the 10,000 seeded books (which the row
    # cache holds, as Redis holds its keys); the inserts come after, as
    # they grow the store (by some 100,000 books at 9,000/s).
    for op in get insert; do
        for mode in plain pipelined; do
            if [ "$mode" = plain ]; then sflags="-c 50"; rflags="-c 50"; else sflags="-c 50 --concurrency 800"; rflags="-c 50 -P 16"; fi
            rop=$([ "$op" = get ] && echo get || echo set)
            echo "server vs redis: $op ($mode)…" >&2
            "$BIN/strata-bench" --workload books --port "$STRATA_PORT" $sflags --driver wire --threads 1 -d "$DURATION" --mix "$op=100" --warmup 3s --json --out "$WORK/$op-$mode.json" > /dev/null
            redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" $rflags -n 500000 -t "$rop" -d 200 -r 100000 --csv > "$WORK/redis-$op-$mode.csv"
            s_rps=$(json "$WORK/$op-$mode.json" "d['throughputRps']")
            s_p99=$(json "$WORK/$op-$mode.json" "d['latencyMs']['p99']")
            r_rps=$(python3 -c "import csv,sys; r=list(csv.reader(open(sys.argv[1])))[1]; print(r[1])" "$WORK/redis-$op-$mode.csv")
            r_p99=$(python3 -c "import csv,sys; r=list(csv.reader(open(sys.argv[1])))[1]; print(r[6])" "$WORK/redis-$op-$mode.csv")
            row "$op $mode throughput (req/s)" "$s_rps" "$r_rps (redis ${rop^^})" "$(ratio "$s_rps" "$r_rps")"
            row "$op $mode p99 (ms)" "$s_p99" "$r_p99 (redis ${rop^^})" "$(ratio "$s_p99" "$r_p99")"
        done
    done
    stop_strata
    # Context for the insert row: Redis's SET is not durable (no
    # append-only file). The same SET with every write fsynced before it is
    # answered (appendfsync always: one fsync per event-loop pass, Redis's
    # group commit) is the like-for-like figure for durable saves.
    echo "server vs redis: durable SET (appendfsync always)…" >&2
    mkdir -p "$WORK/redis-aof"
    DURABLE_PORT=$((REDIS_PORT + 1))
    redis-server --port "$DURABLE_PORT" --bind 127.0.0.1 --dir "$WORK/redis-aof" --save "" --appendonly yes --appendfsync always --daemonize no > "$WORK/redis-aof.log" 2>&1 &
    DURABLE_PID=$!
    PIDS+=("$DURABLE_PID")
    # Ready, and really ours (with its append-only file on), before measuring.
    for _ in $(seq 50); do
        [ "$(redis-cli -p "$DURABLE_PORT" config get appendfsync 2>/dev/null | tail -1)" = always ] && break
        sleep 0.1
    done
    if [ "$(redis-cli -p "$DURABLE_PORT" config get appendfsync 2>/dev/null | tail -1)" != always ]; then
        echo "the durable redis-server did not start on port $DURABLE_PORT:" >&2; cat "$WORK/redis-aof.log" >&2; exit 1
    fi
    redis-benchmark -h 127.0.0.1 -p "$DURABLE_PORT" -c 50 -n 300000 -t set -d 200 -r 100000 --csv > "$WORK/redis-durable-set.csv"
    kill "$DURABLE_PID" 2>/dev/null || true
    wait "$DURABLE_PID" 2>/dev/null || true
    d_rps=$(python3 -c "import csv,sys; r=list(csv.reader(open(sys.argv[1])))[1]; print(r[1])" "$WORK/redis-durable-set.csv")
    s_rps=$(json "$WORK/insert-plain.json" "d['throughputRps']")
    row "insert plain vs durable SET (req/s)" "$s_rps" "$d_rps (SET, fsync always)" "$(ratio "$s_rps" "$d_rps")"
fi

# 3. Scale
if [ -z "${SKIP_SCALE:-}" ]; then
    first_query=""
    for n in $SCALES; do
        echo "scale: $n objects…" >&2
        start_strata "$WORK/data-$n"
        "$BIN/strata-bench" --workload books --port "$STRATA_PORT" --dataset "$n" --feedback-per-book 0 -n 1 --mix count=1 > /dev/null
        "$BIN/strata-bench" --workload books --port "$STRATA_PORT" -c 10 -d "$DURATION" --mix get=100 --json --out "$WORK/scale-get-$n.json" > /dev/null
        "$BIN/strata-bench" --workload books --port "$STRATA_PORT" -c 10 -d "$DURATION" --mix query=100 --json --out "$WORK/scale-query-$n.json" > /dev/null
        g=$(json "$WORK/scale-get-$n.json" "d['latencyMs']['p50']"); g99=$(json "$WORK/scale-get-$n.json" "d['latencyMs']['p99']")
        q=$(json "$WORK/scale-query-$n.json" "d['latencyMs']['p50']"); q99=$(json "$WORK/scale-query-$n.json" "d['latencyMs']['p99']")
        if [ -z "$first_query" ]; then first_query=$q; first_n=$n; fi
        row "get p50 / p99 at $n (ms)" "$g / $g99" "" ""
        row "query p50 / p99 at $n (ms)" "$q / $q99" "$first_query (query p50 at $first_n)" "$(ratio "$q" "$first_query")"
        if [ "$n" = "$(echo $SCALES | awk '{print $1}')" ]; then
            read -r count before after per <<< "$(python3 Tools/benchmark/idle_connections.py "$STRATA_PORT" "$STRATA_PID" 1000)"
            row "server RSS with $count idle connections (KiB)" "$after" "$before (before)" "$per KiB/conn"
        fi
        stop_strata
    done
fi

# 4. Security: what TLS and access rules cost, each beside the same run
# without, on one event-loop thread (CPU per request does not move with
# the machine's load; throughput does).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
measure() { # $1 label, $2 json out, then strata-bench options; prints "rps cpu_us_per_request"
    local label=$1 out=$2; shift 2
    local before after
    before=$(cpu_ticks "$STRATA_PID")
    "$BIN/strata-bench" --workload books --port "$STRATA_PORT" --driver wire --threads 1 -d "$DURATION" --json --out "$out" "$@" > /dev/null
    after=$(cpu_ticks "$STRATA_PID")
    python3 - "$out" "$before" "$after" "$(getconf CLK_TCK)" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); ticks = int(sys.argv[3]) - int(sys.argv[2]); hz = int(sys.argv[4])
n = d["requests"]
print(d["throughputRps"], round(ticks / hz * 1e6 / n, 1) if n else "n/a")
PY
}
if [ -z "${SKIP_SECURITY:-}" ]; then
    SEC="$WORK/security"; mkdir -p "$SEC"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=bench CA" \
        -keyout "$SEC/ca-key.pem" -out "$SEC/ca.pem" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=localhost" \
        -keyout "$SEC/server-key.pem" -out "$SEC/server.csr" 2>/dev/null
    openssl x509 -req -in "$SEC/server.csr" -CA "$SEC/ca.pem" -CAkey "$SEC/ca-key.pem" -CAcreateserial -days 2 \
        -extfile <(printf "subjectAltName=IP:127.0.0.1,DNS:localhost") -out "$SEC/server.pem" 2>/dev/null
    digest() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
    printf '{"tokens": [{"sha256": "%s", "subject": "root", "roles": ["admin"]}, {"sha256": "%s", "subject": "reader", "roles": []}]}' \
        "$(digest root-token)" "$(digest reader-token)" > "$SEC/auth.json"
    printf '{"Book": {"read": "pages >= 0"}, "Feedback": {"read": "TRUEPREDICATE"}}' > "$SEC/rules.json"
    for variant in plain tls; do
        extra=(); client=()
        if [ "$variant" = tls ]; then extra=(--tls-cert "$SEC/server.pem" --tls-key "$SEC/server-key.pem"); client=(--tls-ca "$SEC/ca.pem"); fi
        start_strata "$WORK/data-sec-$variant" --event-loop-threads 1 --auth-file "$SEC/auth.json" "${extra[@]}"
        "$BIN/strata-bench" --workload books --port "$STRATA_PORT" --auth-token root-token "${client[@]}" --dataset 10000 --feedback-per-book 1 -n 1 --mix count=1 > /dev/null
        read -r get_rps get_cpu <<< "$(measure get "$SEC/get-$variant.json" --auth-token root-token "${client[@]}" -c 50 --mix get=100 --warmup 3s)"
        read -r ins_rps ins_cpu <<< "$(measure insert "$SEC/insert-$variant.json" --auth-token root-token "${client[@]}" -c 50 --mix insert=100)"
        eval "get_rps_$variant=$get_rps get_cpu_$variant=$get_cpu ins_rps_$variant=$ins_rps ins_cpu_$variant=$ins_cpu"
        stop_strata
    done
    row "get, TLS vs plain (req/s)" "$get_rps_tls" "$get_rps_plain (plain)" "$(ratio "$get_rps_tls" "$get_rps_plain")"
    row "get, TLS vs plain (server CPU us/req)" "$get_cpu_tls" "$get_cpu_plain (plain)" "$(ratio "$get_cpu_tls" "$get_cpu_plain")"
    row "insert, TLS vs plain (req/s)" "$ins_rps_tls" "$ins_rps_plain (plain)" "$(ratio "$ins_rps_tls" "$ins_rps_plain")"
    row "insert, TLS vs plain (server CPU us/req)" "$ins_cpu_tls" "$ins_cpu_plain (plain)" "$(ratio "$ins_cpu_tls" "$ins_cpu_plain")"
    start_strata "$WORK/data-sec-rules" --event-loop-threads 1 --auth-file "$SEC/auth.json" --rules "$SEC/rules.json"
    "$BIN/strata-bench" --workload books --port "$STRATA_PORT" --auth-token root-token --dataset 10000 --feedback-per-book 1 -n 1 --mix count=1 > /dev/null
    read -r q_rule q_rule_cpu <<< "$(measure query "$SEC/query-rule.json" --auth-token reader-token -c 10 --mix query=100 --warmup 2s)"
    read -r q_admin q_admin_cpu <<< "$(measure query "$SEC/query-admin.json" --auth-token root-token -c 10 --mix query=100 --warmup 2s)"
    read -r g_admin g_admin_cpu <<< "$(measure get "$SEC/get-admin.json" --auth-token root-token -c 50 --mix get=100 --warmup 3s)"
    stop_strata
    start_strata "$WORK/data-sec-norules" --event-loop-threads 1 --auth-file "$SEC/auth.json"
    "$BIN/strata-bench" --workload books --port "$STRATA_PORT" --auth-token root-token --dataset 10000 --feedback-per-book 1 -n 1 --mix count=1 > /dev/null
    read -r g_none g_none_cpu <<< "$(measure get "$SEC/get-none.json" --auth-token reader-token -c 50 --mix get=100 --warmup 3s)"
    stop_strata
    row "query under a read rule vs admin (req/s)" "$q_rule" "$q_admin (admin, no rule)" "$(ratio "$q_rule" "$q_admin")"
    row "query under a read rule vs admin (CPU us/req)" "$q_rule_cpu" "$q_admin_cpu (admin, no rule)" "$(ratio "$q_rule_cpu" "$q_admin_cpu")"
    row "get unrestricted, rules on vs off (req/s)" "$g_admin" "$g_none (no rules)" "$(ratio "$g_admin" "$g_none")"
    row "get unrestricted, rules on vs off (CPU us/req)" "$g_admin_cpu" "$g_none_cpu (no rules)" "$(ratio "$g_admin_cpu" "$g_none_cpu")"
fi

printf '\n%-52s %-22s %-30s %s\n' "benchmark" "strata" "baseline" "ratio"
for r in "${ROWS_OUT[@]}"; do
    IFS='|' read -r label s b q <<< "$r"
    printf '%-52s %-22s %-30s %s\n' "$label" "$s" "$b" "$q"
done
