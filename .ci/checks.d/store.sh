#!/usr/bin/env bash
# `lgcodec store` (audit, encrypt, rekey) on a real SQLite file and a real PostgreSQL
# (started here, stopped on exit), with Python's own savers reading every row after each
# step (vectors/store/python_reads.py, the digest of every value it reads):
#  1. tests/store.rs: classes, verdicts, Python-format rows, dry runs, read-only and
#     foreign stores, unreadable rows, a live writer between read and write, kill -9
#     rounds then resume, Postgres connections terminated mid-sweep.
#  2. Per backend: a store with rows in clear and rows under an old key -> audit finds
#     them -> encrypt -> rotation (new primary, old key as LANGGRAPH_AES_FALLBACK_KEYS)
#     -> rekey -> audit under the new key alone is clean; Python reads the same values
#     at every step, and no longer with the old key alone.
set -euo pipefail
STEP_PREFIX=store
# shellcheck source=../lib/pg_check.sh
source .ci/lib/pg_check.sh

step "rust tests (tests/store.rs)" cargo test --quiet --features cli,sqlite,postgres --test store
step "build lgcodec and store_fixture" cargo build --quiet --features cli,sqlite,postgres --bin lgcodec --example store_fixture
L="target/debug/lgcodec"
FIX="target/debug/examples/store_fixture"
READS="vectors/store/python_reads.py"
OLD="store-ci-old-key-0123456789abcde"
NEW="store-ci-new-key-0123456789abcde"

expect() { # STATUS CMD...: runs CMD, fails unless it exits with STATUS
    local want="$1"; shift
    local rc=0
    "$@" >"$WORK/out" 2>&1 || rc=$?
    if [ "$rc" != "$want" ]; then
        echo "store: expected exit $want, got $rc: $*"; cat "$WORK/out"; return 1
    fi
    tail -n 1 "$WORK/out"
}

flow() { # STORE
    local S="$1" before after
    "$FIX" "$S" 4 6 >/dev/null
    "$FIX" "$S" 4 6 --key "$OLD" --prefix old- >/dev/null
    before="$(LANGGRAPH_AES_KEY="$OLD" "$PY" "$READS" "$S")"
    echo "store: python reads $before"
    expect 1 env LANGGRAPH_AES_KEY="$OLD" "$L" store audit "$S"
    expect 0 env LANGGRAPH_AES_KEY="$OLD" "$L" store encrypt "$S" --dry-run
    expect 0 env LANGGRAPH_AES_KEY="$OLD" "$L" store encrypt "$S" --batch-size 50
    expect 0 env LANGGRAPH_AES_KEY="$OLD" "$L" store audit "$S"
    after="$(LANGGRAPH_AES_KEY="$OLD" "$PY" "$READS" "$S")"
    [ "$before" = "$after" ] || { echo "store: python reads other values after encrypt: $after"; return 1; }
    # Rotation: the new key is the primary, the old one decrypt-only.
    expect 1 env LANGGRAPH_AES_KEY="$NEW" LANGGRAPH_AES_FALLBACK_KEYS="$OLD" "$L" store audit "$S"
    expect 0 env LANGGRAPH_AES_KEY="$NEW" LANGGRAPH_AES_FALLBACK_KEYS="$OLD" "$L" store audit "$S" --allow-previous
    expect 0 env LANGGRAPH_AES_KEY="$NEW" LANGGRAPH_AES_FALLBACK_KEYS="$OLD" "$L" store rekey "$S" --max-rows-per-sec 100000
    # The proof that the old key can go: clean with the new key alone.
    expect 0 env LANGGRAPH_AES_KEY="$NEW" "$L" store audit "$S" --json
    after="$(LANGGRAPH_AES_KEY="$NEW" "$PY" "$READS" "$S")"
    [ "$before" = "$after" ] || { echo "store: python reads other values after rekey: $after"; return 1; }
    if LANGGRAPH_AES_KEY="$OLD" "$PY" "$READS" "$S" >/dev/null 2>&1; then
        echo "store: the old key still reads the store"; return 1
    fi
}

step "sqlite: audit, encrypt, rotate, rekey; Python reads every step" flow "$WORK/store.db"
"$PY" -c "import psycopg, sys; psycopg.connect(sys.argv[1], autocommit=True).execute('CREATE DATABASE store_e2e')" "$URL"
step "postgres: audit, encrypt, rotate, rekey; Python reads every step" flow "${URL%/*}/store_e2e"
