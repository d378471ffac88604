#!/usr/bin/env bash
# `lgcodec store` (audit, encrypt, rekey) on a real SQLite file and a real PostgreSQL
# (started here, stopped on exit), with Python's own savers reading every row after each
# step (vectors/store/python_reads.py, the digest of every value it reads):
#  1. tests/store/sweep.rs: classes, verdicts, Python-format rows, dry runs, read-only and
#     foreign stores, unreadable rows, a live writer between read and write, kill -9
#     rounds then resume, Postgres connections terminated mid-sweep.
#  2. Per backend: a store with rows in clear and rows under an old key -> audit finds
#     them -> encrypt -> rotation (new primary, old key as LANGGRAPH_AES_FALLBACK_KEYS)
#     -> rekey -> audit under the new key alone is clean once the old bytes are gone
#     from the files (--vacuum: SQLite VACUUM, Postgres VACUUM FULL); Python reads the
#     same values at every step, and no longer with the old key alone.
set -euo pipefail
STEP_PREFIX=store
# shellcheck source=../lib/pg_check.sh
source .ci/lib/pg_check.sh

step "rust tests (tests/store/sweep.rs)" cargo test --quiet --all-features --test store -- sweep::
step "build lgcodec and store_fixture" cargo build --quiet --all-features --bin lgcodec --example store_fixture
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
    expect 0 env LANGGRAPH_AES_KEY="$OLD" "$L" store encrypt "$S" --batch-size 50 --vacuum
    expect 0 env LANGGRAPH_AES_KEY="$OLD" "$L" store audit "$S"
    after="$(LANGGRAPH_AES_KEY="$OLD" "$PY" "$READS" "$S")"
    [ "$before" = "$after" ] || { echo "store: python reads other values after encrypt: $after"; return 1; }
    # Rotation: the new key is the primary, the old one decrypt-only.
    expect 1 env LANGGRAPH_AES_KEY="$NEW" LANGGRAPH_AES_FALLBACK_KEYS="$OLD" "$L" store audit "$S"
    expect 0 env LANGGRAPH_AES_KEY="$NEW" LANGGRAPH_AES_FALLBACK_KEYS="$OLD" "$L" store audit "$S" --allow-previous
    expect 0 env LANGGRAPH_AES_KEY="$NEW" LANGGRAPH_AES_FALLBACK_KEYS="$OLD" "$L" store rekey "$S" --max-rows-per-sec 100000
    # The old ciphertexts are still in the files until a vacuum (Postgres: dead rows;
    # SQLite: free pages, when the rewrites freed any).
    if [ "${S#postgres}" != "$S" ]; then
        expect 1 env LANGGRAPH_AES_KEY="$NEW" "$L" store audit "$S"
    fi
    expect 0 env LANGGRAPH_AES_KEY="$NEW" "$L" store audit "$S" --allow-free-space
    expect 0 env LANGGRAPH_AES_KEY="$NEW" LANGGRAPH_AES_FALLBACK_KEYS="$OLD" "$L" store rekey "$S" --vacuum
    # The proof that the old key can go: clean with the new key alone.
    expect 0 env LANGGRAPH_AES_KEY="$NEW" "$L" store audit "$S" --json
    after="$(LANGGRAPH_AES_KEY="$NEW" "$PY" "$READS" "$S")"
    [ "$before" = "$after" ] || { echo "store: python reads other values after rekey: $after"; return 1; }
    if LANGGRAPH_AES_KEY="$OLD" "$PY" "$READS" "$S" >/dev/null 2>&1; then
        echo "store: the old key still reads the store"; return 1
    fi
}

step "sqlite: audit, encrypt, rotate, rekey; Python reads every step" flow "$WORK/store.db"

# A full disk mid-sweep (a small tmpfs: room for the store, not for rewriting it): a clear
# error and exit 2, nothing half-written (Python reads every value, the same values), and
# the same command, run again with room, resumes and finishes.
full_disk() {
    local D="$WORK/full" size before after
    mkdir -p "$D"
    "$FIX" "$WORK/full-src.db" 20 10 >/dev/null
    size="$(stat -c %s "$WORK/full-src.db")"
    if ! mount -t tmpfs -o "size=$((size + size / 4))" tmpfs "$D" 2>"$WORK/out"; then
        if [ "${CI:-}" = true ]; then echo "store: cannot mount a tmpfs in CI:"; cat "$WORK/out"; return 1; fi
        echo "store: skipped the full-disk check (mounting a tmpfs needs root)"; return 0
    fi
    # shellcheck disable=SC2064
    trap "umount '$D' 2>/dev/null || true; pg_check_end" EXIT
    "$PY" -c 'import sqlite3, sys; d = sqlite3.connect(sys.argv[2]); sqlite3.connect(sys.argv[1]).backup(d); d.close()' \
        "$WORK/full-src.db" "$D/s.db"
    before="$("$PY" "$READS" "$WORK/full-src.db")"
    expect 2 env LANGGRAPH_AES_KEY="$NEW" "$L" store encrypt "$D/s.db" --batch-size 50
    grep -q "disk is full" "$WORK/out" || { echo "store: the error does not say the disk is full"; cat "$WORK/out"; return 1; }
    after="$(LANGGRAPH_AES_KEY="$NEW" "$PY" "$READS" "$D/s.db")"
    [ "$before" = "$after" ] || { echo "store: python reads other values after a full disk: $after"; return 1; }
    mount -o "remount,size=$((size * 4))" "$D"
    expect 0 env LANGGRAPH_AES_KEY="$NEW" "$L" store encrypt "$D/s.db" --batch-size 50
    expect 0 env LANGGRAPH_AES_KEY="$NEW" "$L" store audit "$D/s.db" --allow-free-space
    after="$(LANGGRAPH_AES_KEY="$NEW" "$PY" "$READS" "$D/s.db")"
    [ "$before" = "$after" ] || { echo "store: python reads other values after the resumed encrypt: $after"; return 1; }
    umount "$D"
}
step "sqlite: a full disk mid-encrypt, then resume" full_disk
"$PY" -c "import psycopg, sys; psycopg.connect(sys.argv[1], autocommit=True).execute('CREATE DATABASE store_e2e')" "$URL"
step "postgres: audit, encrypt, rotate, rekey; Python reads every step" flow "${URL%/*}/store_e2e"
