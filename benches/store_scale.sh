#!/usr/bin/env bash
# Every `lgcodec store` operation on graph-shaped SQLite stores of growing size
# (examples/store_fixture.rs: threads of 10 checkpoints, a messages channel of up to 10
# messages, small channel values, two pending writes each, a subgraph's namespace in
# every fourth thread, an interrupt ending every fifth): wall time, checkpoints per
# second and peak memory (/usr/bin/time) of each, to see that throughput holds and
# memory stays flat as the store grows.
#
#   cargo build --release --features cli,sqlite,postgres --bin lgcodec --example store_fixture
#   SIZES="100000 1000000" bash benches/store_scale.sh
#
# The store is aged (store_fixture --age-days 60: threads' latest checkpoints spread over
# 60 days) so that the date rules (`prune --before`, `--idle-since`, `retain` with
# `max_age`) have something to keep and something to delete: DATE is 30 days before the
# run. `upgrade` runs on a copy brought back to an older layout first (SQLite: `writes`
# without `task_path`, as langgraph-checkpoint-sqlite before 3.1.2 made it; Postgres:
# as langgraph-checkpoint-postgres 1.0.0 made it, without `checkpoint_migrations`, the
# three `thread_id` indexes and `task_path`), the setup untimed.
#
# With LGCODEC_TEST_PG_URL (a server where databases ${DB_PREFIX:-sc}_src, _import,
# _prune, _old and _enc may be dropped and created) and PY (a Python with psycopg, default
# python3), the same operations run on a Postgres store too, made by copying the SQLite
# one into it (that copy is a row of its own); a second copy goes Postgres -> SQLite.
#
# SIZES: checkpoints (multiples of 10; default "100000 1000000"). WORK: a directory
# with room for five copies of the largest store (1,000,000 checkpoints: about 3 GB
# each; default a new directory under /tmp, removed at the end). LGCODEC: the binary
# (default target/release/lgcodec). It ends with each operation at each larger size
# beside the first: its checkpoints per second as a share of the first size's, and its
# peak memory, `over` where the rate is more than 20% lower or the peak over 64 MiB.
# The operations that leave the store as it was (reads, and writes into a new file or
# database) run three times each, their median time kept.
set -euo pipefail
cd "$(dirname "$0")/.."
L="${LGCODEC:-target/release/lgcodec}"; F=target/release/examples/store_fixture
if [[ -n "${WORK:-}" ]]; then W="$WORK"; mkdir -p "$W"; else
  W="$(mktemp -d -t lgcodec-scale.XXXXXX)"; trap 'rm -rf "$W"' EXIT; fi
run() { # NAME N CMD... -> one line: name, checkpoints, seconds, checkpoints/s, peak MiB
  # With REPEAT=k (and AGAIN, a command run before each repetition after the first, to
  # put back what the operation changed): CMD k times, the median time and the highest
  # peak kept. A single run on this VM moves by a third for the operations that write
  # gigabytes: the SQLite export of a million checkpoints took 9.7-16.6 s over eleven
  # runs (2026-12-04), the slowest the first after the store was made.
  local name=$1 n=$2 t0 t1 kib peak=0 i times=(); shift 2
  for ((i = 1; i <= ${REPEAT:-1}; i++)); do
    if ((i > 1)) && [[ -n "${AGAIN:-}" ]]; then eval "$AGAIN"; fi
    # The files the set-up wrote (gigabytes at a million checkpoints) flushed first:
    # their write-back otherwise runs beside the operation timed (the first operations
    # after the fixture ran 15-50% slower at a million, 2026-12-03).
    sync
    t0=$(date +%s%N)
    /usr/bin/time -f "%M" -o "$W/t" "$@" >"$W/out" 2>"$W/err" || { cat "$W/out" "$W/err"; return 1; }
    # The time includes the operation's own writes reaching the disk (`sync` after
    # it): the kernel writes a 300 MB file back after the process has ended, and 3 GB
    # while it runs, so without it the smaller store's rate left that work out
    # (2026-12-03: import of a million checkpoints into a file on the disk 28.0-34.5 s,
    # into /dev/shm 18.2-24.6 s).
    sync
    t1=$(date +%s%N)
    read -r kib <"$W/t"
    ((kib > peak)) && peak=$kib
    times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')")
  done
  s=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ t[NR] = $1 } END { print t[int((NR + 1) / 2)] }')
  awk -v name="$name" -v n="$n" -v s="$s" -v kib="$peak" -v all="${times[*]}" \
    'BEGIN { rate = (s > 0 ? sprintf("%9.0f", n / s) : sprintf("%9s", "-"))
      gsub(" ", " / ", all); each = (all ~ "/" ? "  (median of " all " s)" : "")
      printf "%-38s %9d checkpoints %8.2f s %s checkpoints/s %6.1f MiB%s\n", name, n, s, rate, kib / 1024, each }'
  printf '%s\t%s\t%s\t%s\n' "$name" "$n" "$s" "$peak" >>"$W/rates"
}
PGURL="${LGCODEC_TEST_PG_URL:-}"; BASE="${PGURL%/*}"; D="${DB_PREFIX:-sc}"; PY="${PY:-python3}"
psqlc() { # SQL [URL]: runs SQL (autocommit), prints the first column of the first row
  "$PY" -c 'import sys, psycopg
c = psycopg.connect(sys.argv[1], autocommit=True); r = c.execute(sys.argv[2])
print(r.fetchone()[0] if r.description else "", end="")' "${2:-$PGURL}" "$1"; }
drop() { psqlc "DROP DATABASE IF EXISTS $1 WITH (FORCE)"; }
fresh() { drop "$1"; psqlc "CREATE DATABASE $1 ${2:+TEMPLATE $2}"; }
K1=scale-bench-key-one-32-bytes-aaa; K2=scale-bench-key-two-32-bytes-bbb
rotate() { # N LABEL STORE: encrypt under K1, rekey to K2; then every value under K2 alone
  run "${2}encrypt" "$1" env LANGGRAPH_AES_KEY=$K1 "$L" store encrypt "$3" --json
  run "${2}rekey" "$1" env LANGGRAPH_AES_KEY=$K2 LANGGRAPH_AES_KEY_PREVIOUS=$K1 "$L" store rekey "$3" --json
  # Old bytes in free pages or dead row versions are not the question here.
  LANGGRAPH_AES_KEY=$K2 "$L" store audit "$3" --allow-free-space >"$W/out" 2>&1 || { cat "$W/out"; echo "not all under the new key"; exit 1; }
}
CUT=$(date -u -d "30 days ago" +%FT%TZ)
printf '[rules]\nkeep_latest = 2\nmax_age = "30d"\n' >"$W/retention.toml"
rules() { # LABEL STORE STORE_TEMPLATE_CMD: the date rules and retain, each on a fresh copy
  local label=$1 store=$2 again=$3
  $again; run "${label}prune --before DATE" "$n" "$L" store prune "$store" --before "$CUT" --json
  $again; run "${label}prune --idle-since DATE" "$n" "$L" store prune "$store" --idle-since "$CUT" --json
  $again; run "${label}retain (keep 2, max age 30d)" "$n" "$L" store retain "$store" --policy "$W/retention.toml" --once
}
upgraded() { grep -q '"current":true' "$W/out" || { cat "$W/out"; echo "not upgraded"; exit 1; }; }
sq_again() { rm -f "$W"/rule.db*; cp "$W/src.db" "$W/rule.db"; }
pg_again() { fresh ${D}_prune ${D}_src; }
echo "# $(date -u +%FT%TZ) load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
: >"$W/rates"
for n in ${SIZES:-100000 1000000}; do
  rm -f "$W"/*.db* "$W"/*.jsonl
  "$F" "$W/src.db" $((n / 10)) 10 --age-days 60 >/dev/null
  echo "# $n checkpoints: $(stat -c %s "$W/src.db") bytes"
  REPEAT=3 run "stats --top 10" "$n" "$L" store stats "$W/src.db" --top 10 --json
  REPEAT=3 run "audit" "$n" "$L" store audit "$W/src.db" --allow-clear --json
  REPEAT=3 run "inspect (every thread, JSON)" "$n" "$L" store inspect "$W/src.db" --json
  REPEAT=3 run "export" "$n" "$L" store export "$W/src.db" "$W/backup.jsonl"
  # The machine's own rate for the same bytes, beside the two rows that write a file as
  # large as the store: the backup copied by `cat` into a new file, from a `sync` to a
  # `sync` as every row. Where its rate at the larger size falls as the export's and the
  # import's do, the fall is the disk's and the page cache's, not lgcodec's.
  REPEAT=3 AGAIN='rm -f "$W/control.jsonl"' run "control: cat of the backup to a new file" "$n" \
    sh -c 'cat "$1" >"$2"' cat "$W/backup.jsonl" "$W/control.jsonl"
  rm -f "$W/control.jsonl"
  REPEAT=3 run "verify (backup file)" "$n" "$L" store verify "$W/backup.jsonl"
  REPEAT=3 AGAIN='rm -f "$W"/imported.db*' run "import into a new file" "$n" "$L" store import "$W/backup.jsonl" "$W/imported.db"
  rm -f "$W/backup.jsonl" "$W"/imported.db*
  REPEAT=3 AGAIN='rm -f "$W"/copy.db*' run "copy SQLite -> SQLite (verified)" "$n" "$L" store copy "$W/src.db" "$W/copy.db" --json
  grep -q '"mismatches":\[\]' "$W/out" || { echo "copy mismatches"; exit 1; }
  rm -f "$W"/copy.db*
  cp "$W/src.db" "$W/prune.db"
  run "prune --keep-latest 1" "$n" "$L" store prune "$W/prune.db" --keep-latest 1 --json
  rm -f "$W"/prune.db*
  rules "" "$W/rule.db" sq_again
  rm -f "$W"/rule.db*
  cp "$W/src.db" "$W/old.db"
  "$PY" -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("ALTER TABLE writes DROP COLUMN task_path")' "$W/old.db"
  run "upgrade (writes without task_path)" "$n" "$L" store upgrade "$W/old.db" --json
  upgraded; rm -f "$W"/old.db*
  cp "$W/src.db" "$W/enc.db"
  rotate "$n" "" "$W/enc.db"
  rm -f "$W"/enc.db*
  [[ -n "${LGCODEC_TEST_PG_URL:-}" ]] || continue
  fresh ${D}_src
  REPEAT=3 AGAIN='fresh ${D}_src' run "copy SQLite -> Postgres (verified)" "$n" "$L" store copy "$W/src.db" "$BASE/${D}_src" --json
  grep -q '"mismatches":\[\]' "$W/out" || { echo "copy mismatches"; exit 1; }
  rm -f "$W"/src.db*
  psqlc "VACUUM ANALYZE" "$BASE/${D}_src"
  echo "# $n checkpoints in Postgres: $(psqlc "SELECT pg_database_size('${D}_src')") bytes"
  REPEAT=3 run "Postgres: stats --top 10" "$n" "$L" store stats "$BASE/${D}_src" --top 10 --json
  REPEAT=3 run "Postgres: audit" "$n" "$L" store audit "$BASE/${D}_src" --allow-clear --json
  REPEAT=3 run "Postgres: inspect (every thread, JSON)" "$n" "$L" store inspect "$BASE/${D}_src" --json
  REPEAT=3 run "Postgres: export" "$n" "$L" store export "$BASE/${D}_src" "$W/backup.jsonl"
  fresh ${D}_import
  REPEAT=3 AGAIN='fresh ${D}_import' run "Postgres: import into a new database" "$n" "$L" store import "$W/backup.jsonl" "$BASE/${D}_import"
  rm -f "$W/backup.jsonl"; drop ${D}_import
  REPEAT=3 AGAIN='rm -f "$W"/copy.db*' run "copy Postgres -> SQLite (verified)" "$n" "$L" store copy "$BASE/${D}_src" "$W/copy.db" --json
  grep -q '"mismatches":\[\]' "$W/out" || { echo "copy mismatches"; exit 1; }
  rm -f "$W"/copy.db*
  fresh ${D}_prune ${D}_src
  run "Postgres: prune --keep-latest 1" "$n" "$L" store prune "$BASE/${D}_prune" --keep-latest 1 --json
  rules "Postgres: " "$BASE/${D}_prune" pg_again
  drop ${D}_prune
  fresh ${D}_old ${D}_src
  psqlc "DROP INDEX checkpoints_thread_id_idx, checkpoint_blobs_thread_id_idx, checkpoint_writes_thread_id_idx;
    ALTER TABLE checkpoint_writes DROP COLUMN task_path; DROP TABLE checkpoint_migrations" "$BASE/${D}_old"
  run "Postgres: upgrade (from 1.0.0)" "$n" "$L" store upgrade "$BASE/${D}_old" --json
  upgraded; drop ${D}_old
  fresh ${D}_enc ${D}_src
  rotate "$n" "Postgres: " "$BASE/${D}_enc"
  drop ${D}_enc; drop ${D}_src
done
echo "# $(date -u +%FT%TZ) load average: $(cut -d' ' -f1-3 /proc/loadavg)"
# Each operation at each larger size beside the first size: its checkpoints per second
# as a share of the first size's, and its peak against the first size's; `over` marks
# a rate more than 20% lower or a peak over 64 MiB (the scale criteria). Operations
# that take under 0.1 s at the first size (`upgrade` of SQLite) are left out.
awk -F'\t' '
  !($1 in first_n) { first_n[$1] = $2; first_rate[$1] = ($3 > 0 ? $2 / $3 : 0); first_kib[$1] = $4; order[++k] = $1; next }
  { n[$1] = $2; rate[$1] = ($3 > 0 ? $2 / $3 : 0); kib[$1] = $4 }
  END {
    for (i = 1; i <= k; i++) {
      op = order[i]
      if (!(op in n) || first_rate[op] == 0 || first_n[op] / first_rate[op] < 0.1) continue
      share = rate[op] / first_rate[op]
      flag = (share < 0.8 || kib[op] > 64 * 1024) ? "  over" : ""
      printf "# %-38s at %d: %5.1f%% of the rate at %d, peak %+.1f MiB (%.1f MiB)%s\n",
        op, n[op], 100 * share, first_n[op], (kib[op] - first_kib[op]) / 1024, kib[op] / 1024, flag
    }
  }' "$W/rates"
