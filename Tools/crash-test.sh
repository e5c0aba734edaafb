#!/usr/bin/env bash
# kill -9 durability: no acknowledged save is ever lost.
#
#   Tools/crash-test.sh [--rounds N] [--store sqlite|sqlite-no-history|binary]
#                       [--writers N] [--batch N] [--keep]
#
# Each round starts strata-server on one data directory, runs writers that
# insert Books with unique titles (even writers one object per save, odd
# ones --batch objects per save) and log a save only once the server has
# acknowledged it, then kills the server with SIGKILL at a random moment
# (0.3 to 1.5 s in). After the rounds, a fresh server reads every Book and
# strata-crash check compares with the log: every acknowledged object
# present, no title twice, every save all there or not at all; then
# PRAGMA integrity_check on the SQLite files. Prints one summary line;
# exits non-zero on any loss, duplicate, partial save or integrity error.
#
# STRATA_BIN: the folder holding built strata-server and strata-crash
# (default: a release build, made if needed).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=50 store=sqlite writers=4 batch=500 keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --store) store=$2; shift 2 ;;
    --writers) writers=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done

if [ -z "${STRATA_BIN:-}" ]; then
  swift build -c release --product strata-server >/dev/null
  swift build -c release --product strata-crash >/dev/null
  STRATA_BIN=$(swift build -c release --show-bin-path)
fi

case "$store" in
  sqlite) server_args=() ;;
  sqlite-no-history) server_args=(--no-history) ;;
  binary) server_args=(--store Book=binary:Books.binary --store Feedback=binary:Feedback.binary) ;;
  *) echo "unknown store kind '$store' (sqlite, sqlite-no-history, binary)" >&2; exit 2 ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/strata-crash-XXXXXX")
data=$work/data
acked=$work/acked.log
: > "$acked"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null || true
  if [ "$keep" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# Starts the server on $data and sets server_pid and port.
start_server() {
  local log=$work/server-$1.log
  "$STRATA_BIN/strata-server" --port 0 --data-dir "$data" --empty --log-level info ${server_args[@]+"${server_args[@]}"} >"$log" 2>&1 &
  server_pid=$!
  port=""
  for _ in $(seq 1 400); do
    port=$(grep -o 'on 127.0.0.1:[0-9]*' "$log" 2>/dev/null | head -1 | grep -o '[0-9]*$' || true)
    [ -n "$port" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.05
  done
  echo "strata-server did not start:" >&2; cat "$log" >&2; exit 1
}

for round in $(seq 1 "$rounds"); do
  start_server "$round"
  "$STRATA_BIN/strata-crash" write --port "$port" --prefix "r$round" --log "$acked" \
    --writers "$writers" --batch "$batch" --seconds 30 >/dev/null 2>&1 &
  writer_pid=$!
  # 0.3 to 1.5 s of writing, then the crash.
  sleep "$(awk -v r="$RANDOM" 'BEGIN { printf "%.3f", 0.3 + (r % 1200) / 1000 }')"
  kill -9 "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
  # The writers stop at their first failed save.
  for _ in $(seq 1 200); do kill -0 "$writer_pid" 2>/dev/null || break; sleep 0.05; done
  kill -9 "$writer_pid" 2>/dev/null || true
  wait "$writer_pid" 2>/dev/null || true
done

start_server check
status=0
summary=$("$STRATA_BIN/strata-crash" check --port "$port" --log "$acked" --rounds "$rounds") || status=1
kill -TERM "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
integrity="n/a (binary store: it opened and was read)"
if [ "$store" != binary ]; then
  files=()
  for f in "$data"/*.sqlite; do files+=(--sqlite "$f"); done
  if integrity_lines=$("$STRATA_BIN/strata-crash" check --log "$acked" "${files[@]}"); then
    integrity=$(echo "$integrity_lines" | sed 's/^integrity //' | paste -sd ',' -)
  else
    integrity="FAILED: $integrity_lines"; status=1
  fi
fi
echo "crash-test $store: $summary, integrity $integrity"
exit "$status"
