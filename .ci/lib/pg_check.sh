# Sourced by the .ci/checks.d scripts that run against a throwaway PostgreSQL, with
# STEP_PREFIX set to the check's name (which prefixes every line printed here):
# sources timed.sh (`step NAME CMD...`, `now_ms`), starts the server
# (vectors/postgres/pg_server.sh) and prints how long that took, and sets
#   PY    the Python to run (.ci/run sets it to the CI venv's; else python3),
#   URL   the server's connection string,
#   WORK  a scratch directory.
# On exit it removes WORK, stops the server and prints the check's total time (or that
# it failed).
PY="${PY:-python3}"
# shellcheck source=./timed.sh
source .ci/lib/timed.sh
T0="$(now_ms)"
# shellcheck source=../../vectors/postgres/pg_server.sh
source vectors/postgres/pg_server.sh
echo "$STEP_PREFIX: server up: $(( $(now_ms) - T0 )) ms"
URL="$LGCODEC_TEST_PG_URL"
WORK="$(mktemp -d -t "lgcodec-$STEP_PREFIX.XXXXXX")"
pg_check_end() {
    local rc=$?
    rm -rf "$WORK"
    pg_stop
    if [ "$rc" = 0 ]; then
        echo "$STEP_PREFIX: total $(( $(now_ms) - T0 )) ms"
    else
        echo "$STEP_PREFIX: failed (exit $rc) after $(( $(now_ms) - T0 )) ms"
    fi
}
trap pg_check_end EXIT
