#!/usr/bin/env bash
# `lgcodec store retain --once` beside `langgraph-ephemeral-checkpointer` 0.0.2's
# `Sweeper.sweep()` (benches/store_retain_ephemeral.py), the same idle and hard-age TTLs
# on copies of one store, SQLite and Postgres: wall time and peak memory
# (/usr/bin/time) of each, and the rows left compared key for key
# (benches/store_maint_check.py same) — the two must delete the same threads.
#
#   cargo build --release --features cli,sqlite,postgres --bin lgcodec --example store_fixture
#   PY=/path/to/python LGCODEC_TEST_PG_URL=postgresql://... bash benches/store_retain_vs_ephemeral.sh
#
# PY: a Python with the pinned packages and langgraph-ephemeral-checkpointer==0.0.2
# (pip install --no-deps; it needs nothing the pins lack). The stores:
# examples/store_fixture.rs with --age-days 60 (threads' latest checkpoints spread over
# 60 days, a third of them begun 20 and a third 40 days earlier), THREADS x STEPS
# checkpoints. SIZES: "THREADSxSTEPS ..." (default "10000x10"); IDLE, HARD: days
# (default 30, 50); ONLY: sqlite and/or postgres (default both); DB_PREFIX (default rv);
# LGCODEC, FIXTURE: the binaries (default the release ones).
set -euo pipefail
cd "$(dirname "$0")/.."
W="$(mktemp -d -t lgcodec-retain-bench.XXXXXX)"; trap 'rm -rf "$W"' EXIT
PY="${PY:-python3}"; L="${LGCODEC:-target/release/lgcodec}"; F="${FIXTURE:-target/release/examples/store_fixture}"
IDLE="${IDLE:-30}"; HARD="${HARD:-50}"; ONLY="${ONLY:-sqlite postgres}"; D="${DB_PREFIX:-rv}"
BASE="${LGCODEC_TEST_PG_URL:-}"; BASE="${BASE%/*}"
psqlc() { "$PY" -c 'import sys, psycopg; c = psycopg.connect(sys.argv[1], autocommit=True); c.execute(sys.argv[2])' "$LGCODEC_TEST_PG_URL" "$1"; }
fresh() { psqlc "DROP DATABASE IF EXISTS $1 WITH (FORCE)"; psqlc "CREATE DATABASE $1 ${2:+TEMPLATE $2}"; }
measure() { # CMD... -> "wall_s maxrss_kb"
  /usr/bin/time -f "%e %M" -o "$W/t" "$@" >"$W/out" 2>"$W/err" || { cat "$W/out" "$W/err"; return 1; }
  cat "$W/t"
}
# The sweeper has no exception for a thread waiting at an interrupt (the fixture stops
# every fifth thread at one): lgcodec's `interrupted = "delete"` sweeps them alike.
printf '[rules]\nidle_ttl = "%sd"\nhard_ttl = "%sd"\n\n[keep]\ninterrupted = "delete"\n' "$IDLE" "$HARD" > "$W/policy.toml"
pair() { # LABEL RUST_STORE PYTHON_STORE
  local r p
  r=$(measure "$L" store retain "$2" --policy "$W/policy.toml" --once)
  local deleted; deleted=$(grep -o '"threads_deleted":[0-9]*' "$W/out")
  p=$(measure "$PY" benches/store_retain_ephemeral.py "$3" "$IDLE" "$HARD")
  local py_deleted; py_deleted=$(grep -o '"threads_deleted": [0-9]*' "$W/out")
  "$PY" benches/store_maint_check.py same "$2" "$3" > "$W/same"
  echo "retain $1 checkpoints=$n lgcodec=[$r] ephemeral=[$p] (seconds, peak KiB); lgcodec $deleted, ephemeral $py_deleted; $(cat "$W/same")"
}
echo "# $(date -u +%FT%TZ) load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; idle ${IDLE}d, hard ${HARD}d"
for size in ${SIZES:-10000x10}; do
  threads=${size%x*}; steps=${size#*x}; n=$((threads * steps))
  if [[ " $ONLY " == *" sqlite "* ]]; then
    rm -f "$W"/*.db*
    $F "$W/src.db" "$threads" "$steps" --age-days 60 >/dev/null
    cp "$W/src.db" "$W/rust.db"; cp "$W/src.db" "$W/py.db"
    pair sqlite "$W/rust.db" "$W/py.db"
  fi
  if [[ " $ONLY " == *" postgres "* ]]; then
    fresh ${D}_src; $F "$BASE/${D}_src" "$threads" "$steps" --age-days 60 >/dev/null
    # A store in use has planner statistics; a database just filled has none until
    # autovacuum's analyze comes round (measured: 50,000 two-checkpoint threads, every
    # lgcodec page query 60-120 ms instead of 1 ms, 69.7 s in all).
    "$PY" -c 'import sys, psycopg; psycopg.connect(sys.argv[1], autocommit=True).execute("ANALYZE")' "$BASE/${D}_src"
    fresh ${D}_rust ${D}_src; fresh ${D}_py ${D}_src
    pair postgres "$BASE/${D}_rust" "$BASE/${D}_py"
  fi
done
echo "# $(date -u +%FT%TZ) load average: $(cut -d' ' -f1-3 /proc/loadavg)"
