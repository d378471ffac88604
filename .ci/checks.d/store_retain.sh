#!/usr/bin/env bash
# `lgcodec store retain --once` and langgraph-ephemeral-checkpointer 0.0.2's
# `Sweeper.sweep()` (an independent implementation of idle and hard-age TTLs, from
# PyPI) on copies of one aged store, SQLite and Postgres: both must delete the same
# threads, row for row (benches/store_retain_vs_ephemeral.sh at a small size; its
# timings are printed, not judged). Then two `--every` sweepers beside a live LangGraph
# app (a real graph: messages, a DeltaChannel, an interrupt) on each backend:
# vectors/store_maint/retain_live.py checks what the policy says with Python alone.
# Last, `retain --once` killed with SIGKILL mid-way (4 rounds each, SQLite and
# Postgres) and run again: equal to an uninterrupted sweep.
set -euo pipefail
STEP_PREFIX=store_retain
# shellcheck source=../lib/pg_check.sh
source .ci/lib/pg_check.sh

step "build store_fixture" cargo build --quiet --all-features --bin lgcodec --example store_fixture
step "retain and ephemeral-checkpointer delete the same threads" \
  env PY="$PY" LGCODEC=target/debug/lgcodec FIXTURE=target/debug/examples/store_fixture \
  SIZES="1000x10 3000x2" DB_PREFIX=ci_rv bash benches/store_retain_vs_ephemeral.sh
for store in "$WORK/live.db" "${URL%/*}/ci_retain_live"; do
  if [[ "$store" == postgres* ]]; then
    "$PY" -c 'import sys, psycopg; c = psycopg.connect(sys.argv[1], autocommit=True); c.execute("DROP DATABASE IF EXISTS ci_retain_live"); c.execute("CREATE DATABASE ci_retain_live")' "$URL"
  fi
  step "two sweepers beside a live graph: $store" "$PY" vectors/store_maint/retain_live.py target/debug/lgcodec "$store" 10
done
step "retain killed mid-way (4 rounds each, SQLite and Postgres) and resumed: equal to an uninterrupted retain" \
  "$PY" -u vectors/store_maint/prune_kill_resume.py --retain target/debug/lgcodec 4 "$URL"
