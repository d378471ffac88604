#!/usr/bin/env bash
# `lgcodec store copy | prune | export | import` beside what a user does today with
# Python's savers (benches/store_copy_python_script.py, benches/store_prune_python_script.py,
# benches/store_backup_python_script.py)
# on the same graph-shaped stores (examples/store_fixture.rs: 10 checkpoints per thread,
# two pending writes each, a subgraph's namespace in every fourth thread, an interrupt
# ending every fifth), SQLite and Postgres: wall time and peak memory
# (/usr/bin/time, after `sync` and a Postgres CHECKPOINT) of each, every result checked (counts; Python's savers read the
# target, benches/store_maint_check.py; `lgcodec store audit` reads every value).
# The date rules (prune-before: `--before DATE`, prune-idle: `--idle-since DATE`) run on
# an aged store (store_fixture --age-days 60: threads' latest checkpoints spread over 60
# days, a third of the threads begun 20 and a third 40 days before that) with DATE
# $CUT_DAYS (default 30) days before the run, the same DATE given to both sides; the
# two results are compared row by row (store_maint_check.py same: checkpoints with
# their parent ids, writes, Postgres blobs).
#
#   cargo build --release --features cli,sqlite,postgres --bin lgcodec --example store_fixture
#   PY=/path/to/python LGCODEC_TEST_PG_URL=postgresql://... bash benches/store_maint_vs_python.sh
#
# PY: a Python with the pinned packages. LGCODEC_TEST_PG_URL: a server where databases
# DB_src, DB_rust, DB_py, DB_prune_rust, DB_prune_py, DB_import, DB_import_py, DB_aged, DB_rule_rust
# and DB_rule_py may be dropped and created (DB: $DB_PREFIX, default mb). SIZES
# (checkpoints, multiples of 10; default "10000 100000"), LGCODEC (the binary; default
# target/release/lgcodec), PY_SKIP (copies whose Python side is left out:
# sqlite->postgres, postgres->sqlite, sqlite->sqlite), ONLY (a list among copy-sqlite-pg, copy-pg-sqlite,
# copy-sqlite-sqlite, prune, prune-before, prune-idle, export; default all).
set -euo pipefail
cd "$(dirname "$0")/.."
W="$(mktemp -d -t lgcodec-maint-bench.XXXXXX)"; trap 'rm -rf "$W"' EXIT
PY="${PY:-python3}"; L="${LGCODEC:-target/release/lgcodec}"; F=target/release/examples/store_fixture
BASE="${LGCODEC_TEST_PG_URL%/*}"; D="${DB_PREFIX:-mb}"
ONLY="${ONLY:-copy-sqlite-pg copy-pg-sqlite copy-sqlite-sqlite prune prune-before prune-idle export}"
CUT_DAYS="${CUT_DAYS:-30}"
psqlc() { "$PY" -c 'import sys, psycopg; c = psycopg.connect(sys.argv[1], autocommit=True); c.execute(sys.argv[2])' "$LGCODEC_TEST_PG_URL" "$1"; }
fresh() { psqlc "DROP DATABASE IF EXISTS $1 WITH (FORCE)"; psqlc "CREATE DATABASE $1 ${2:+TEMPLATE $2}"; }
measure() { # CMD... -> "wall_s maxrss_kb"; the command's output in $W/out
  # What the steps before wrote (the fixtures: hundreds of MB in files and in the
  # server's buffers; the other side's copy) reaches the disk first, not beside the
  # command timed (as benches/store_scale.sh does).
  sync; psqlc CHECKPOINT 2>/dev/null || true
  /usr/bin/time -f "%e %M" -o "$W/t" "$@" >"$W/out" 2>"$W/err" || { cat "$W/out" "$W/err"; return 1; }
  cat "$W/t"
}
sqlcp() { "$PY" -c 'import sqlite3,sys; d=sqlite3.connect(sys.argv[2]); sqlite3.connect(sys.argv[1]).backup(d); d.close()' "$1" "$2"; }
want() { [[ " $ONLY " == *" $1 "* ]]; }
copy_pair() { # LABEL SOURCE RUST_TARGET PYTHON_TARGET
  local r p
  r=$(measure $L store copy "$2" "$3" --json)
  grep -q '"mismatches":\[\]' "$W/out" || { echo "rust copy mismatches"; cat "$W/out"; exit 1; }
  p="not run"
  if [[ " ${PY_SKIP:-} " != *" $1 "* ]]; then
    p=$(measure $PY benches/store_copy_python_script.py "$2" "$4")
    $PY benches/store_maint_check.py copy "$2" "$4" >/dev/null
  fi
  $PY benches/store_maint_check.py copy "$2" "$3" >/dev/null
  $L store audit "$3" --allow-clear >/dev/null
  echo "copy $1 checkpoints=$n rust=[$r] python=[$p] (seconds, peak KiB)"
}
rule_pair() { # LABEL FLAG DATE RUST_STORE PYTHON_STORE SCRIPT_NAME
  local r p rd pd
  r=$(measure $L store prune "$4" "$2" "$3" --json)
  rd="$(grep -o '"threads_deleted":[0-9]*' "$W/out"), $(grep -o '"checkpoints_deleted":[0-9]*' "$W/out")"
  p=$(measure $PY benches/store_prune_python_script.py "$5" "$2" "$3")
  pd="$(grep -o '"threads_deleted": [0-9]*' "$W/out"), $(grep -o '"checkpoints_before": [0-9]*, "checkpoints_after": [0-9]*' "$W/out")"
  $PY benches/store_maint_check.py same "$4" "$5" >"$W/same" || { cat "$W/same"; exit 1; }
  echo "prune $1 $2 $3 checkpoints=$n rust=[$r] $6=[$p] (seconds, peak KiB); lgcodec $rd; script $pd; $(cat "$W/same")"
}
echo "# $(date -u +%FT%TZ) load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
for n in ${SIZES:-10000 100000}; do
  threads=$((n / 10))
  rm -f "$W"/*.db* "$W"/*.jsonl
  if want copy-sqlite-pg || want copy-pg-sqlite || want copy-sqlite-sqlite || want prune || want export; then
    $F "$W/src.db" $threads 10 >/dev/null
    fresh ${D}_src; $F "$BASE/${D}_src" $threads 10 >/dev/null
  fi
  if want prune-before || want prune-idle; then
    $F "$W/aged.db" $threads 10 --age-days 60 >/dev/null
    fresh ${D}_aged; $F "$BASE/${D}_aged" $threads 10 --age-days 60 >/dev/null
    # A store in use has planner statistics (benches/store_retain_vs_ephemeral.sh).
    "$PY" -c 'import sys, psycopg; psycopg.connect(sys.argv[1], autocommit=True).execute("ANALYZE")' "$BASE/${D}_aged"
    cut=$(date -u -d "$CUT_DAYS days ago" +%FT%TZ)
  fi

  if want copy-sqlite-pg; then
    fresh ${D}_rust; fresh ${D}_py
    copy_pair "sqlite->postgres" "$W/src.db" "$BASE/${D}_rust" "$BASE/${D}_py"
  fi
  if want copy-pg-sqlite; then
    copy_pair "postgres->sqlite" "$BASE/${D}_src" "$W/rust.db" "$W/py.db"
  fi
  if want copy-sqlite-sqlite; then
    rm -f "$W"/rust.db* "$W"/py.db*
    copy_pair "sqlite->sqlite" "$W/src.db" "$W/rust.db" "$W/py.db"
  fi

  if want prune; then
    sqlcp "$W/src.db" "$W/prune_rust.db"; sqlcp "$W/src.db" "$W/prune_py.db"
    r=$(measure $L store prune "$W/prune_rust.db" --keep-latest 1 --json)
    p=$(measure $PY benches/store_prune_python_script.py "$W/prune_py.db")
    $PY benches/store_maint_check.py prune "$W/prune_rust.db" "$W/src.db" >/dev/null
    $PY benches/store_maint_check.py prune "$W/prune_py.db" "$W/src.db" >/dev/null
    echo "prune sqlite keep-latest=1 checkpoints=$n rust=[$r] raw-sql=[$p] (seconds, peak KiB)"
    fresh ${D}_prune_rust ${D}_src; fresh ${D}_prune_py ${D}_src
    r=$(measure $L store prune "$BASE/${D}_prune_rust" --keep-latest 1 --json)
    p=$(measure $PY benches/store_prune_python_script.py "$BASE/${D}_prune_py")
    $PY benches/store_maint_check.py prune "$BASE/${D}_prune_rust" "$BASE/${D}_src" >/dev/null
    $PY benches/store_maint_check.py prune "$BASE/${D}_prune_py" "$BASE/${D}_src" >/dev/null
    echo "prune postgres keep-latest=1 checkpoints=$n rust=[$r] python-prune=[$p] (seconds, peak KiB)"
  fi

  for rule in prune-before prune-idle; do
    want $rule || continue
    flag=--before; [[ $rule == prune-idle ]] && flag=--idle-since
    rm -f "$W"/rule_*.db*; sqlcp "$W/aged.db" "$W/rule_rust.db"; sqlcp "$W/aged.db" "$W/rule_py.db"
    rule_pair sqlite $flag "$cut" "$W/rule_rust.db" "$W/rule_py.db" raw-sql
    fresh ${D}_rule_rust ${D}_aged; fresh ${D}_rule_py ${D}_aged
    rule_pair postgres $flag "$cut" "$BASE/${D}_rule_rust" "$BASE/${D}_rule_py" python
  done

  if want export; then
    r=$(measure $L store export "$W/src.db" "$W/s.jsonl")
    i=$(measure $L store import "$W/s.jsonl" "$W/imported.db")
    $PY benches/store_maint_check.py copy "$W/src.db" "$W/imported.db" >/dev/null
    pe=$(measure $PY benches/store_backup_python_script.py export "$W/src.db" "$W/s.py.jsonl")
    pi=$(measure $PY benches/store_backup_python_script.py import "$W/s.py.jsonl" "$W/imported.py.db")
    $PY benches/store_maint_check.py copy "$W/src.db" "$W/imported.py.db" >/dev/null
    echo "export sqlite checkpoints=$n file_bytes=$(stat -c %s "$W/s.jsonl") export=[$r] import=[$i] python_export=[$pe] python_import=[$pi] (seconds, peak KiB)"
    rm -f "$W"/s*.jsonl "$W"/imported*.db*
    fresh ${D}_import; fresh ${D}_import_py
    r=$(measure $L store export "$BASE/${D}_src" "$W/p.jsonl")
    i=$(measure $L store import "$W/p.jsonl" "$BASE/${D}_import")
    $PY benches/store_maint_check.py copy "$BASE/${D}_src" "$BASE/${D}_import" >/dev/null
    pe=$(measure $PY benches/store_backup_python_script.py export "$BASE/${D}_src" "$W/p.py.jsonl")
    pi=$(measure $PY benches/store_backup_python_script.py import "$W/p.py.jsonl" "$BASE/${D}_import_py")
    $PY benches/store_maint_check.py copy "$BASE/${D}_src" "$BASE/${D}_import_py" >/dev/null
    echo "export postgres checkpoints=$n file_bytes=$(stat -c %s "$W/p.jsonl") export=[$r] import=[$i] python_export=[$pe] python_import=[$pi] (seconds, peak KiB)"
    rm -f "$W"/p*.jsonl
  fi
done
echo "# $(date -u +%FT%TZ) load average: $(cut -d' ' -f1-3 /proc/loadavg)"
