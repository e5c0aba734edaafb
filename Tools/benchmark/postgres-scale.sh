#!/usr/bin/env bash
# Many strata-servers on one PostgreSQL (see docs/running-several-servers.md):
# 1, 2 and 4 strata-server processes serve the sample's stores from one
# database (a fresh pair of schemas per row); each gets its own strata-bench
# with 50 connections doing gets of the 10,000 seeded books, then durable
# inserts; with two servers or more, one more run inserts through the first
# server while subscribed to the second, and reports how long the second
# takes to announce each insert (the cross-server notification latency).
# Beside them, pgbench does the same rows directly on the same database:
# single-row INSERTs and gets by key on a Book table like Strata's, 50
# connections, prepared statements.
#
# Every row gives throughput, and CPU time per request of each strata-server
# (mean of the processes) and of PostgreSQL (all of its processes, reaped
# backends included), from /proc: on a machine with fewer cores than
# processes the throughput shows the mechanism, not the scaling; the CPU
# per request is what predicts the scaling on a bigger machine.
#
# Environment: DURATION (default 10s), SERVERS (default "1 2 4"),
# NOTIFY_INSERTS (inserts of the latency run, default 2000), BIN (release
# binaries; built when unset).
set -euo pipefail
cd "$(dirname "$0")/../.."

DURATION=${DURATION:-10s}
SERVERS=${SERVERS:-"1 2 4"}
NOTIFY_INSERTS=${NOTIFY_INSERTS:-2000}
WORK=$(mktemp -d /tmp/strata-pg-scale.XXXXXX)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]:-}"; do [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    Tools/postgres/test-server.sh stop > /dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT

if [ -z "${BIN:-}" ]; then
    echo "building release…" >&2
    swift build -c release --product strata-server >&2
    swift build -c release --product strata-bench >&2
    BIN=$(swift build -c release --show-bin-path)
fi

# The database: a throwaway PostgreSQL 127.0.0.1 (fsync on,
# synchronous_commit on: a commit is answered once its WAL is flushed).
eval "$(Tools/postgres/test-server.sh start)"
export PGPASSWORD
URL=$STRATA_POSTGRES_URL
PGPORT=${URL##*:}; PGPORT=${PGPORT%%/*}
PSQL=(psql -h 127.0.0.1 -p "$PGPORT" -U strata -v ON_ERROR_STOP=1 -q strata_test)
command -v pgbench > /dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-contrib > /dev/null; }

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
pg_cpu_ticks() { python3 Tools/benchmark/postgres-cpu-ticks.py "$STRATA_POSTGRES_DIR/data/postmaster.pid"; }
us_per() { python3 -c "import os,sys; t=float(sys.argv[1]); n=float(sys.argv[2]); print(round(t / os.sysconf('SC_CLK_TCK') * 1e6 / n, 1) if n else 'n/a')" "$1" "$2"; }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); v=d
for k in sys.argv[2].split('.'): v=v[k]
print(v)" "$1" "$2"; }

SERVER_PIDS=(); SERVER_PORTS=()
start_servers() {  # $1: count, $2: schema suffix
    SERVER_PIDS=(); SERVER_PORTS=()
    for i in $(seq 1 "$1"); do
        local log="$WORK/server-$2-$i.log"
        "$BIN/strata-server" --port 0 --data-dir "$WORK/data" --empty \
            --store "Book=postgres:$URL?schema=books_$2" --store "Feedback=postgres:$URL?schema=feedback_$2" > "$log" 2>&1 &
        local pid=$!
        PIDS+=("$pid")
        local port=""
        for _ in $(seq 1 200); do
            port=$(grep -o 'on 127.0.0.1:[0-9]*' "$log" 2>/dev/null | head -1 | cut -d: -f2 || true)
            [ -n "$port" ] && break
            sleep 0.1
        done
        [ -n "$port" ] || { echo "strata-server did not start" >&2; cat "$log" >&2; exit 1; }
        SERVER_PIDS+=("$pid"); SERVER_PORTS+=("$port")
    done
}
stop_servers() { for pid in "${SERVER_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done; }

# One run of `op` on every server at once, 50 connections each; prints
# "total_rps p99_max strata_us_per_request postgres_us_per_request".
run_all() {
    local op=$1 tag=$2 warm=$3 benches=() before=() pg_before pg_after
    if [ -n "$warm" ]; then
        local warming=()
        for port in "${SERVER_PORTS[@]}"; do
            "$BIN/strata-bench" --workload books --port "$port" --driver wire --threads 1 -c 50 -d "$warm" --mix "$op=100" > /dev/null &
            warming+=("$!")
        done
        for pid in "${warming[@]}"; do wait "$pid"; done
        sleep 0.2
    fi
    for pid in "${SERVER_PIDS[@]}"; do before+=("$(cpu_ticks "$pid")"); done
    pg_before=$(pg_cpu_ticks)
    local i=0
    for port in "${SERVER_PORTS[@]}"; do
        "$BIN/strata-bench" --workload books --port "$port" --driver wire --threads 1 -c 50 -d "$DURATION" --mix "$op=100" --json --out "$WORK/$tag-$i.json" > /dev/null &
        benches+=("$!"); i=$((i + 1))
    done
    for pid in "${benches[@]}"; do wait "$pid"; done
    pg_after=$(pg_cpu_ticks)
    local requests=0 rps=0 p99=0 ticks=0
    i=0
    for pid in "${SERVER_PIDS[@]}"; do
        ticks=$((ticks + $(cpu_ticks "$pid") - before[i]))
        requests=$((requests + $(json "$WORK/$tag-$i.json" requests)))
        rps=$(python3 -c "print(round($rps + $(json "$WORK/$tag-$i.json" throughputRps), 1))")
        p99=$(python3 -c "print(max($p99, $(json "$WORK/$tag-$i.json" latencyMs.p99)))")
        i=$((i + 1))
    done
    echo "$rps $p99 $(us_per "$ticks" "$requests") $(us_per "$((pg_after - pg_before))" "$requests")"
}

printf '%-8s | %-34s | %-34s | %-22s\n' servers "insert: req/s, p99 ms, CPU us/req strata + postgres" "get: req/s, p99 ms, CPU us/req strata + postgres" "announce by another server p50 / p99 ms"
for n in $SERVERS; do
    echo "$n server(s)…" >&2
    start_servers "$n" "s$n"
    "$BIN/strata-bench" --workload books --port "${SERVER_PORTS[0]}" --dataset 10000 --feedback-per-book 1 -n 1 --mix count=1 > /dev/null
    # Gets first (each server's row cache warmed by its own gets), then
    # inserts: the other servers' catching up on the inserts would count
    # in the gets' figures otherwise.
    sleep 2
    read -r g_rps g_p99 g_cpu g_pg <<< "$(run_all get "get-$n" 3s)"
    read -r i_rps i_p99 i_cpu i_pg <<< "$(run_all insert "insert-$n" "")"
    notify="n/a"
    if [ "$n" -ge 2 ]; then
        "$BIN/strata-bench" --workload books --port "${SERVER_PORTS[0]}" --watch-port "${SERVER_PORTS[1]}" -c 2 -n "$NOTIFY_INSERTS" --mix insert=100 --json --out "$WORK/notify-$n.json" > /dev/null
        notify="$(json "$WORK/notify-$n.json" notification.latencyMs.p50) / $(json "$WORK/notify-$n.json" notification.latencyMs.p99) (missing $(json "$WORK/notify-$n.json" notification.missing))"
    fi
    printf '%-8s | %-34s | %-34s | %-22s\n' "$n" "$i_rps, $i_p99, $i_cpu + $i_pg" "$g_rps, $g_p99, $g_cpu + $g_pg" "$notify"
    stop_servers
done

# pgbench, the same rows directly: a Book table like the store's, 10,000 rows.
"${PSQL[@]}" <<'SQL'
CREATE TABLE bench_book (
    id bigserial PRIMARY KEY, version bigint NOT NULL DEFAULT 1, uuid uuid NOT NULL UNIQUE, title text NOT NULL,
    canonical_title text, author text, publish_date double precision, price numeric, pages integer, cover_color bytea
);
CREATE INDEX bench_book_title ON bench_book (title);
CREATE INDEX bench_book_pages ON bench_book (pages);
INSERT INTO bench_book (uuid, title, canonical_title, author, pages, price)
    SELECT gen_random_uuid(), 'Seeded book ' || i, 'seeded book ' || i, 'Author ' || (i % 997), 1 + (random() * 999)::int, (random() * 10000)::int / 100.0
    FROM generate_series(1, 10000) AS i;
ANALYZE bench_book;
SQL
printf '\\set id random(1, 10000)\nSELECT * FROM bench_book WHERE id = :id;\n' > "$WORK/get.sql"
printf '\\set pages random(1, 1000)\nINSERT INTO bench_book (uuid, title, canonical_title, pages) VALUES (gen_random_uuid(), '"'"'Bench book'"'"', '"'"'bench book'"'"', :pages);\n' > "$WORK/insert.sql"
for op in insert get; do
    before=$(pg_cpu_ticks)
    pgbench -h 127.0.0.1 -p "$PGPORT" -U strata -n -M prepared -c 50 -j 1 -T "${DURATION%s}" -f "$WORK/$op.sql" strata_test > "$WORK/pgbench-$op.out" 2>&1
    after=$(pg_cpu_ticks)
    tps=$(awk '/^tps/ {print $3; exit}' "$WORK/pgbench-$op.out")
    n=$(awk '/number of transactions actually processed/ {print $NF}' "$WORK/pgbench-$op.out" | cut -d/ -f1)
    lat=$(awk '/latency average/ {print $4}' "$WORK/pgbench-$op.out")
    printf 'pgbench %-7s %s tps, mean latency %s ms, PostgreSQL CPU %s us/req\n' "$op" "$tps" "$lat" "$(us_per "$((after - before))" "$n")"
done
