# Sourced by .ci/lib/pg_check.sh (for the Postgres checks in .ci/checks.d) and usable by
# hand: starts a throw-away PostgreSQL on 127.0.0.1 and a free port, exports
# LGCODEC_TEST_PG_URL, and stops the server (and removes its directory) when the
# sourcing shell exits.
# Installs PostgreSQL with apt-get when no server binaries are found.
pg_bin_dir() {
    local d
    for d in /usr/lib/postgresql/*/bin; do
        [ -x "$d/initdb" ] && { echo "$d"; return 0; }
    done
    return 1
}
if ! PG_BIN="$(pg_bin_dir)"; then
    echo "postgres: no server found, installing the Debian package"
    apt-get update -qq && apt-get install -y -qq --no-install-recommends postgresql >/dev/null
    PG_BIN="$(pg_bin_dir)"
fi
PG_DIR="$(mktemp -d -t lgcodec-pg.XXXXXX)"
chown postgres "$PG_DIR" 2>/dev/null || true
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
PG_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
as_pg "$PG_BIN/initdb" -N -A trust -U postgres -E UTF8 -D "$PG_DIR/data" >/dev/null
pg_stop() {
    as_pg "$PG_BIN/pg_ctl" stop -D "$PG_DIR/data" -m fast >/dev/null 2>&1 || true
    rm -rf "$PG_DIR"
}
trap pg_stop EXIT
as_pg "$PG_BIN/pg_ctl" start -w -D "$PG_DIR/data" -l "$PG_DIR/log" \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" >/dev/null
export LGCODEC_TEST_PG_URL="postgresql://postgres@127.0.0.1:$PG_PORT/postgres"
echo "postgres: $("$PG_BIN/postgres" --version) on $LGCODEC_TEST_PG_URL"
