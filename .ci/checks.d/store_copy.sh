#!/usr/bin/env bash
# Store maintenance against a throwaway PostgreSQL (run by .ci/run with PY set):
#  1. Rust tests of inspect/stats/export/import/copy (tests/store/maint.rs) on every
#     committed store of old releases and on stores the savers write, SQLite and Postgres;
#     the other store test modules with a Postgres half (reconnect, old layouts, retain,
#     …) and the bounded memory of the sweeps and a copy (tests/store_bounded_memory.rs).
#  2. A real Python graph's SQLite store (messages, Send, subgraph, DeltaChannel,
#     interrupts) copied into an empty Postgres by `lgcodec store copy`; Python's
#     PostgresSaver reads both threads as SQLite gave them and resumes one to its end;
#     copied back into a new SQLite file, Python resumes the other there.
#  3. `lgcodec store copy` killed with SIGKILL mid-way and run again, into Postgres and
#     into a SQLite file: nothing lost, nothing duplicated, every checkpoint verified.
#  4. `lgcodec store prune --keep-latest 1` on that graph's threads (SQLite, and copied
#     into Postgres): Python resumes every kept thread, its DeltaChannel rebuilt.
#  5. `lgcodec store prune` killed with SIGKILL at random points and run again, on
#     SQLite and on Postgres: the store ends byte for byte as an uninterrupted prune
#     leaves it; the same for `lgcodec store import` of a backup, and for
#     `lgcodec store upgrade` of a Postgres store at migration 5 (indexes valid).
set -euo pipefail
STEP_PREFIX=store_copy
# shellcheck source=../lib/pg_check.sh
source .ci/lib/pg_check.sh

# Every store test module with a Postgres half, but those other checks run
# (layouts, upgrade, sends: store_layouts.sh; sweep: store.sh).
step "rust tests (inspect, stats, export/import, copy, reconnect, old layouts, operator, refusals, retain, files, bad targets, setup kill, beside a Python writer, values split as Python's put splits them, damaged stores, long threads pruned a window at a time)" \
    env LGCODEC_PYTHON="$PY" cargo test --quiet --all-features --test store -- \
    maint:: reconnect:: old_layouts:: operator:: refusals:: retain:: files:: bad_targets:: setup_kill:: \
    beside_python:: split:: corrupt:: long_threads::
step "rust tests (bounded memory of the store sweeps, SQLite and Postgres, and of a copy)" \
    cargo test --quiet --all-features --test store_bounded_memory
step "build lgcodec" cargo build --quiet --all-features --bin lgcodec
BIN="target/debug/lgcodec"

fresh_db() {
    "$PY" - "$URL" "$1" <<'PY'
import sys, psycopg
url, name = sys.argv[1], sys.argv[2]
with psycopg.connect(url, autocommit=True) as c:
    c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    c.execute(f'CREATE DATABASE "{name}"')
base = url.rsplit("/", 1)[0]
print(f"{base}/{name}")
PY
}

step "python graph: SQLite -> Postgres -> SQLite, resumed on both" \
    "$PY" -u vectors/store_maint/copy_resume.py "$BIN" "$(fresh_db store_copy_py)"
step "copy killed mid-way and resumed (SQLite -> Postgres)" \
    "$PY" -u vectors/store_maint/kill_resume.py "$BIN" "$(fresh_db store_copy_kill)" 1200
KILL_TARGET="$(mktemp -d)/copy.sqlite"
step "copy killed mid-way and resumed (SQLite -> SQLite, rows carried as stored)" \
    "$PY" -u vectors/store_maint/kill_resume.py "$BIN" "$KILL_TARGET" 3000
rm -rf "$(dirname "$KILL_TARGET")"
step "prune --keep-latest 1 with a DeltaChannel, resumed by Python (SQLite and Postgres)" \
    "$PY" -u vectors/store_maint/prune_resume.py "$BIN" "$(fresh_db store_prune_py)"
step "prune killed mid-way (4 rounds each, SQLite and Postgres) and resumed: equal to an uninterrupted prune" \
    "$PY" -u vectors/store_maint/prune_kill_resume.py "$BIN" 4 "$URL"
step "import killed mid-way (4 rounds each, SQLite and Postgres) and resumed: equal to an uninterrupted import" \
    "$PY" -u vectors/store_maint/import_kill_resume.py "$BIN" 4 "$URL"
step "upgrade killed mid-way (4 rounds, Postgres at migration 5) and resumed: equal to an uninterrupted upgrade" \
    "$PY" -u vectors/store_maint/upgrade_kill_resume.py "$BIN" "$URL" 4
