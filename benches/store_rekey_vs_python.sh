#!/usr/bin/env bash
# `lgcodec store rekey` beside benches/rekey_python_script.py (the script a user would
# write today) on the same graph-shaped store, 9,990 and 99,990 values, SQLite and
# Postgres: wall time and peak memory (/usr/bin/time) of each. Needs release builds
# (`cargo build --release --features cli,sqlite,postgres --bin lgcodec --example
# store_fixture`), PY (a Python with the pinned packages) and LGCODEC_TEST_PG_URL (a
# server where databases rk_src and rk_py may be dropped and created).
set -euo pipefail
cd "$(dirname "$0")/.."
W="$(mktemp -d -t lgcodec-rekey-bench.XXXXXX)"; trap 'rm -rf "$W"' EXIT
OLD="rekey-bench-old-key-0123456789ab"; NEW="rekey-bench-new-key-0123456789ab"
PY="${PY:-python3}"; L=target/release/lgcodec; F=target/release/examples/store_fixture
BASE="${LGCODEC_TEST_PG_URL%/*}"
psqlc() { "$PY" -c 'import sys, psycopg; c = psycopg.connect(sys.argv[1], autocommit=True); c.execute(sys.argv[2])' "$LGCODEC_TEST_PG_URL" "$1"; }
measure() { # LABEL CMD... -> "wall_s maxrss_kb"
  /usr/bin/time -f "%e %M" -o $W/t "$@" >$W/out 2>&1 || { cat $W/out; return 1; }
  cat $W/t
}
for threads in 333 3333; do
  rm -f $W/s.db*; $F $W/s.db $threads 10 --key "$OLD" >/dev/null
  $PY -c 'import sqlite3,sys; d=sqlite3.connect(sys.argv[2]); sqlite3.connect(sys.argv[1]).backup(d); d.close()' $W/s.db $W/py.db
  r=$(LANGGRAPH_AES_KEY="$NEW" LANGGRAPH_AES_KEY_PREVIOUS="$OLD" measure $L store rekey $W/s.db --json)
  p=$(LANGGRAPH_AES_KEY="$NEW" LANGGRAPH_AES_KEY_PREVIOUS="$OLD" measure $PY benches/rekey_python_script.py $W/py.db)
  LANGGRAPH_AES_KEY="$NEW" $L store audit $W/s.db >/dev/null  # every value under the new key alone
  echo "sqlite values=$((threads * 30)) rust=[$r] python=[$p] (seconds, peak KiB)"
  psqlc "DROP DATABASE IF EXISTS rk_src"; psqlc "DROP DATABASE IF EXISTS rk_py"; psqlc "CREATE DATABASE rk_src"
  $F "$BASE/rk_src" $threads 10 --key "$OLD" >/dev/null
  psqlc "CREATE DATABASE rk_py TEMPLATE rk_src"
  r=$(LANGGRAPH_AES_KEY="$NEW" LANGGRAPH_AES_KEY_PREVIOUS="$OLD" measure $L store rekey "$BASE/rk_src" --json)
  p=$(LANGGRAPH_AES_KEY="$NEW" LANGGRAPH_AES_KEY_PREVIOUS="$OLD" measure $PY benches/rekey_python_script.py "$BASE/rk_py")
  # The old versions of the rewritten rows are a finding of their own until (auto)vacuum
  # runs; what is checked here is that every live value is under the new key alone.
  LANGGRAPH_AES_KEY="$NEW" $L store audit "$BASE/rk_src" --allow-free-space >/dev/null
  echo "postgres values=$((threads * 30)) rust=[$r] python=[$p] (seconds, peak KiB)"
done
