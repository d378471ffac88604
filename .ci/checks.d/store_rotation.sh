#!/usr/bin/env bash
# The runbooks of docs/store-encryption.md, proven while Python keeps running
# (vectors/store/rotation.py): Python graph processes (StateGraph + SqliteSaver /
# PostgresSaver, serializer from python/'s langgraph-codec-keys) keep writing and
# resuming threads, and reading each other's, through rolling restarts while
#  - rotate:  new key deployed as a fallback; primary switched; `lgcodec store rekey`;
#             `lgcodec store audit` clean; old key dropped;
#  - encrypt: a store in clear; key deployed; `lgcodec store encrypt`; audit clean;
#             LANGGRAPH_AES_STRICT=1 (rows in clear refused), with
#             LANGGRAPH_STRICT_MSGPACK=true (LangGraph rebuilds the serializer);
# on a SQLite file and on a throwaway PostgreSQL set up as managed Postgres is: the
# Postgres lane's role connects only over TLS (sslmode=verify-full against the server's
# CA) and only with its password, given in PGPASSWORD as docs/store-encryption.md says
# (the URLs every command and log line shows hold no password; a connection without TLS
# or without the password is refused first). Fails if any writer ever fails, if an
# audit is not clean, or if a thread lost or gained anything. First, two negative
# controls: each runbook without its step 1 must make a writer fail.
set -euo pipefail
STEP_PREFIX=store_rotation
# shellcheck source=../lib/pg_check.sh
source .ci/lib/pg_check.sh
# shellcheck source=../lib/pg_tls.sh
source .ci/lib/pg_tls.sh
DRIVER=vectors/store/rotation.py
OPS_ROLE=operator
OPS_PASSWORD="ops-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
# LGCODEC_STORE_BIN: a prebuilt lgcodec with the store commands (else built here).
LG="${LGCODEC_STORE_BIN:-}"
if [ -z "$LG" ]; then
    step "build lgcodec" cargo build --quiet --all-features --bin lgcodec
    LG="$PWD/target/debug/lgcodec"
fi

# A fresh database the TLS-only role owns; prints the URL an operator would write (no
# password: it comes from PGPASSWORD).
new_db() {
    "$PY" - "$URL" "$1" "$OPS_ROLE" <<'PYEOF'
import sys, psycopg
with psycopg.connect(sys.argv[1], autocommit=True) as c:
    c.execute(f'DROP DATABASE IF EXISTS "{sys.argv[2]}"')
    c.execute(f'CREATE DATABASE "{sys.argv[2]}" OWNER "{sys.argv[3]}"')
PYEOF
    echo "postgresql://$OPS_ROLE@localhost:$PG_PORT/$1?sslmode=verify-full&sslrootcert=$TLS_CA"
}
step "TLS on, a role that connects only over TLS and with its password" pg_tls_role "$OPS_ROLE" "$OPS_PASSWORD"
# The server is as an operator meets it: without TLS, or without the password, the
# store commands are refused with the server's reason (exit 2).
refused() {
    local db out
    db="$(new_db tls_probe)"
    # Python's own saver makes the tables over the same URL and PGPASSWORD.
    PGPASSWORD="$OPS_PASSWORD" "$PY" -c 'import sys
from langgraph.checkpoint.postgres import PostgresSaver
with PostgresSaver.from_conn_string(sys.argv[1]) as s:
    s.setup()' "$db"
    out="$(PGPASSWORD="$OPS_PASSWORD" "$LG" store stats "${db/verify-full/disable}" 2>&1)" && {
        echo "$out"; echo "store_rotation: a connection without TLS was accepted"; return 1; }
    grep -q "no encryption\|pg_hba" <<<"$out" || { echo "$out"; echo "store_rotation: no TLS: not the server's refusal"; return 1; }
    out="$(env -u PGPASSWORD HOME="$WORK" "$LG" store stats "$db" 2>&1)" && {
        echo "$out"; echo "store_rotation: a connection without the password was accepted"; return 1; }
    grep -q "password" <<<"$out" || { echo "$out"; echo "store_rotation: no password: not said"; return 1; }
    PGPASSWORD="$OPS_PASSWORD" "$LG" store stats "$db" >/dev/null 2>&1 || {
        PGPASSWORD="$OPS_PASSWORD" "$LG" store stats "$db"; echo "store_rotation: TLS with the password refused"; return 1; }
}

# Negative controls: without step 1 (the key deployed as decrypt-only everywhere) a
# writer not yet restarted must fail on the rows a restarted one wrote; this check
# fails if the driver does not notice.
must_fail() {
    local scenario="$1" expect="$2" out
    if out="$("$PY" "$DRIVER" runbook "$scenario" "sqlite:$WORK/neg-$scenario.sqlite" --lgcodec "$LG" \
        --work "$WORK/neg-$scenario" --skip-fallback-step 2>&1)"; then
        echo "$out" | tail -5; echo "store_rotation: $scenario without step 1 passed; it must fail"; return 1
    fi
    if ! grep -q "FAIL: writer .*$expect" <<<"$out"; then
        echo "$out" | tail -20; echo "store_rotation: $scenario without step 1 failed otherwise than with: $expect"; return 1
    fi
    grep "FAIL: writer" <<<"$out" | cut -c1-200
}
step "the role is refused without TLS and without its password, taken with both" refused
step "negative control: rotate without the fallback step fails" must_fail rotate "decryption failed"
step "negative control: encrypt without the decrypt-only step fails" must_fail encrypt "Unknown serialization type: msgpack+aes"
# The two backends run side by side (each lane: rotate, then encrypt with strict
# msgpack); each lane's output is printed when it ends.
sqlite_lane() {
    "$PY" "$DRIVER" runbook rotate "sqlite:$WORK/rotate.sqlite" --lgcodec "$LG" --work "$WORK/rotate-sqlite" &&
    LANGGRAPH_STRICT_MSGPACK=true \
        "$PY" "$DRIVER" runbook encrypt "sqlite:$WORK/encrypt.sqlite" --lgcodec "$LG" --work "$WORK/encrypt-sqlite"
}
postgres_lane() {
    local db
    export PGPASSWORD="$OPS_PASSWORD"
    db="$(new_db rotation_rotate)" &&
    "$PY" "$DRIVER" runbook rotate "$db" --lgcodec "$LG" --work "$WORK/rotate-pg" &&
    db="$(new_db rotation_encrypt)" &&
    LANGGRAPH_STRICT_MSGPACK=true \
        "$PY" "$DRIVER" runbook encrypt "$db" --lgcodec "$LG" --work "$WORK/encrypt-pg"
}
lanes() {
    local rc=0
    sqlite_lane > "$WORK/sqlite-lane.log" 2>&1 & local s=$!
    postgres_lane > "$WORK/postgres-lane.log" 2>&1 & local p=$!
    wait "$s" || rc=1
    echo "--- sqlite lane (rotate, encrypt):"; cat "$WORK/sqlite-lane.log"
    wait "$p" || rc=1
    echo "--- postgres lane (rotate, encrypt):"; cat "$WORK/postgres-lane.log"
    return "$rc"
}
step "rotate and encrypt, sqlite and postgres side by side" lanes
