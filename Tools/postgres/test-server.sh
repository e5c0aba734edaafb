#!/usr/bin/env bash
# A throwaway PostgreSQL server for the PostgreSQL suites: on 127.0.0.1 only,
# run by an unprivileged user, its data in a temporary folder, password
# authentication (scram-sha-256) with a random password, and TLS offered
# with a certificate for 127.0.0.1 and localhost from a CA made for it.
#
#   eval "$(Tools/postgres/test-server.sh start)"   # prints the exports below
#   swift test --filter Postgres
#   Tools/postgres/test-server.sh stop
#
# start prints, for eval:
#   STRATA_POSTGRES_URL  postgresql://strata@127.0.0.1:PORT/strata_test
#   PGPASSWORD           the password (never in the URL)
#   STRATA_POSTGRES_DIR  the server's folder (stop removes it)
#   STRATA_POSTGRES_CA   the CA certificate that signed the server's
# A start that fails prints nothing, exits non-zero and leaves nothing
# behind. Installs Debian's postgresql package when no server binaries are
# found, and openssl when missing. Environment: STRATA_POSTGRES_PORT (54329; the next free one of the
# 100 after it if taken).
set -euo pipefail

server_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true; }

command=${1:-}
case "$command" in
start)
    PGBIN=$(server_bin)
    missing=()
    [ -n "$PGBIN" ] || missing+=(postgresql)
    command -v openssl > /dev/null || missing+=(openssl)
    if [ ${#missing[@]} -gt 0 ]; then
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" > /dev/null; } >&2
        PGBIN=$(server_bin)
        [ -n "$PGBIN" ] || { echo "no PostgreSQL server binaries after installing postgresql" >&2; exit 1; }
    fi
    # The first free port from STRATA_POSTGRES_PORT (another server may
    # run on it already: a developer's, another checkout's).
    first=${STRATA_POSTGRES_PORT:-54329}
    port=$first
    while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
        port=$((port + 1))
        [ "$port" -le $((first + 100)) ] || { echo "no free port in $first-$((first + 100))" >&2; exit 1; }
    done
    umask 077
    dir=$(mktemp -d /tmp/strata-postgres.XXXXXX)
    run=()
    # Whatever fails from here removes what was made.
    cleanup() {
        "${run[@]}" "$PGBIN/pg_ctl" -D "$dir/data" -m immediate -w stop > /dev/null 2>&1 || true
        rm -rf "$dir"
    }
    trap cleanup ERR
    trap 'cleanup; exit 130' INT TERM
    command -v openssl > /dev/null || { echo "openssl is needed for the server's TLS certificate" >&2; false; }
    password=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
    printf '%s\n' "$password" > "$dir/password"
    # TLS: a CA, and a server certificate it signs for the loopback names.
    {
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
            -subj "/CN=Strata test PostgreSQL CA" -addext "basicConstraints=critical,CA:TRUE" \
            -keyout "$dir/ca.key" -out "$dir/ca.pem"
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -subj "/CN=127.0.0.1" -keyout "$dir/server.key" -out "$dir/server.csr"
        printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > "$dir/server.ext"
        openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 2 \
            -extfile "$dir/server.ext" -out "$dir/server.pem"
    } > "$dir/openssl.log" 2>&1 || { cat "$dir/openssl.log" >&2; false; }
    chmod 644 "$dir/ca.pem"
    # PostgreSQL refuses to run as root: as root, run it as the postgres
    # user (Debian's package creates it), or a user made for it.
    if [ "$(id -u)" = 0 ]; then
        user=postgres
        if ! id "$user" > /dev/null 2>&1; then
            user=strata-postgres
            id "$user" > /dev/null 2>&1 || useradd --system --no-create-home "$user"
        fi
        chown -R "$user" "$dir"
        run=(runuser -u "$user" --)
    fi
    "${run[@]}" "$PGBIN/initdb" -D "$dir/data" -U strata --pwfile="$dir/password" -A scram-sha-256 -E UTF8 --locale=C.UTF-8 > "$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; false; }
    "${run[@]}" "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200 -c fsync=on -c ssl=on -c ssl_cert_file=$dir/server.pem -c ssl_key_file=$dir/server.key" > /dev/null \
        || { cat "$dir/server.log" >&2; false; }
    PGPASSWORD=$password "$PGBIN/psql" -h 127.0.0.1 -p "$port" -U strata -d postgres -v ON_ERROR_STOP=1 -q \
        -c "CREATE DATABASE strata_test" >&2
    trap - ERR INT TERM
    echo "export STRATA_POSTGRES_URL=postgresql://strata@127.0.0.1:$port/strata_test"
    echo "export PGPASSWORD=$password"
    echo "export STRATA_POSTGRES_DIR=$dir"
    echo "export STRATA_POSTGRES_CA=$dir/ca.pem"
    ;;
stop)
    dir=${STRATA_POSTGRES_DIR:?"STRATA_POSTGRES_DIR is not set (eval the output of start first)"}
    case "$dir" in
        /tmp/strata-postgres.*) ;;
        *) echo "STRATA_POSTGRES_DIR=$dir is not a folder this script made" >&2; exit 1 ;;
    esac
    PGBIN=$(server_bin)
    run=()
    [ "$(id -u)" = 0 ] && [ -d "$dir/data" ] && run=(runuser -u "$(stat -c %U "$dir/data")" --)
    [ -n "$PGBIN" ] && "${run[@]}" "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w stop > /dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
*)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
