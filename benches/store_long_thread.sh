#!/usr/bin/env bash
# One thread of N checkpoints (examples/store_fixture.rs STORE 1 N: one namespace, a
# messages channel, two pending writes a checkpoint): `lgcodec store prune
# --keep-latest 1` on SQLite and on Postgres, dry and for real, and on Postgres beside
# Python's own `PostgresSaver.prune(["thread-0"], strategy="keep_latest")`
# (langgraph-checkpoint-postgres 3.2.0), each real run on a fresh copy of the same
# store; wall time and peak memory from /usr/bin/time.
#
#   cargo build --release --features cli,sqlite,postgres --bin lgcodec --example store_fixture
#   LGCODEC_TEST_PG_URL=postgresql://postgres@127.0.0.1:5432/postgres \
#     PY=.venv/bin/python bash benches/store_long_thread.sh
#
# N: checkpoints (default 100000). RUNS: runs of each, alternating (default 3). PY: a
# Python with vectors/requirements.txt installed. Without LGCODEC_TEST_PG_URL only the
# SQLite rows run. Databases ${DB_PREFIX:-lt}_src and ${DB_PREFIX:-lt}_run of that server
# are dropped and created. WORK: a directory for the SQLite files (default a new one
# under /tmp, removed at the end). LGCODEC: the binary (default target/release/lgcodec).
set -euo pipefail
cd "$(dirname "$0")/.."
L="${LGCODEC:-target/release/lgcodec}"; F=target/release/examples/store_fixture
N="${N:-100000}"; RUNS="${RUNS:-3}"; PY="${PY:-python3}"; P="${DB_PREFIX:-lt}"
if [[ -n "${WORK:-}" ]]; then W="$WORK"; mkdir -p "$W"; else
  W="$(mktemp -d -t lgcodec-long.XXXXXX)"; trap 'rm -rf "$W"' EXIT; fi

timed() { # NAME CMD... -> one line: name, seconds, peak MiB
  local name=$1; shift
  # What the set-up wrote is flushed first, not written back beside the command timed.
  sync
  if [[ -n "${PG:-}" ]]; then sql "$PG" "CHECKPOINT"; fi
  /usr/bin/time -f "%e %M" -o "$W/time" "$@" > /dev/null 2> "$W/err" \
    || { cat "$W/err"; return 1; }
  read -r secs kib < "$W/time"
  awk -v n="$name" -v s="$secs" -v k="$kib" 'BEGIN { printf "%-42s %7.2f s %7.1f MiB\n", n, s, k / 1024 }'
}

sql() { # URL STATEMENT (autocommit: CREATE DATABASE takes no transaction)
  "$PY" -c 'import sys, psycopg
with psycopg.connect(sys.argv[1], autocommit=True) as c: c.execute(sys.argv[2])' "$1" "$2"
}

echo "one thread of $N checkpoints, $(date -u +%Y-%m-%dT%H:%MZ), $RUNS run(s) each"
# The fixture adds to a store that is there: a WORK of an earlier run starts afresh.
rm -f "$W"/src.db* "$W"/run.db*
"$F" "$W/src.db" 1 "$N" > /dev/null
for ((i = 1; i <= RUNS; i++)); do
  timed "SQLite prune --keep-latest 1 --dry-run" "$L" store prune "$W/src.db" --keep-latest 1 --dry-run
  cp "$W/src.db" "$W/run.db"
  timed "SQLite prune --keep-latest 1" "$L" store prune "$W/run.db" --keep-latest 1
done

if [[ -n "${LGCODEC_TEST_PG_URL:-}" ]]; then
  PG="$LGCODEC_TEST_PG_URL"; base="${PG%/*}"
  sql "$PG" "DROP DATABASE IF EXISTS ${P}_run"; sql "$PG" "DROP DATABASE IF EXISTS ${P}_src"
  sql "$PG" "CREATE DATABASE ${P}_src"
  "$L" store copy "$W/src.db" "$base/${P}_src" > /dev/null 2>&1
  sql "$base/${P}_src" "VACUUM ANALYZE"
  fresh() { sql "$PG" "DROP DATABASE IF EXISTS ${P}_run"; sql "$PG" "CREATE DATABASE ${P}_run TEMPLATE ${P}_src"; }
  cat > "$W/prune.py" <<'EOF'
import sys
from langgraph.checkpoint.postgres import PostgresSaver
with PostgresSaver.from_conn_string(sys.argv[1]) as saver:
    saver.prune(["thread-0"], strategy="keep_latest")
EOF
  for ((i = 1; i <= RUNS; i++)); do
    timed "Postgres prune --keep-latest 1 --dry-run" "$L" store prune "$base/${P}_src" --keep-latest 1 --dry-run
    fresh
    timed "Postgres prune --keep-latest 1" "$L" store prune "$base/${P}_run" --keep-latest 1
    fresh
    timed "Python PostgresSaver.prune keep_latest" "$PY" "$W/prune.py" "$base/${P}_run"
  done
  sql "$PG" "DROP DATABASE IF EXISTS ${P}_run"; sql "$PG" "DROP DATABASE IF EXISTS ${P}_src"
fi
