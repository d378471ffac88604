#!/usr/bin/env bash
# Every `lgcodec store` operation on graph-shaped SQLite stores of growing size
# (examples/store_fixture.rs: threads of 10 checkpoints, a messages channel of up to 10
# messages, small channel values, two pending writes each): wall time, checkpoints per
# second and peak memory (/usr/bin/time) of each, to see that throughput holds and
# memory stays flat as the store grows.
#
#   cargo build --release --features cli,sqlite,postgres --bin lgcodec --example store_fixture
#   SIZES="100000 1000000" bash benches/store_scale.sh
#
# With LGCODEC_TEST_PG_URL (a server where databases ${DB_PREFIX:-sc}_src, _import,
# _prune and _enc may be dropped and created) and PY (a Python with psycopg, default
# python3), the same operations run on a Postgres store too, made by copying the SQLite
# one into it (that copy is a row of its own); a second copy goes Postgres -> SQLite.
#
# SIZES: checkpoints (multiples of 10; default "100000 1000000"). WORK: a directory
# with room for five copies of the largest store (1,000,000 checkpoints: about 3 GB
# each; default a new directory under /tmp, removed at the end). LGCODEC: the binary
# (default target/release/lgcodec).
set -euo pipefail
cd "$(dirname "$0")/.."
L="${LGCODEC:-target/release/lgcodec}"; F=target/release/examples/store_fixture
if [[ -n "${WORK:-}" ]]; then W="$WORK"; mkdir -p "$W"; else
  W="$(mktemp -d -t lgcodec-scale.XXXXXX)"; trap 'rm -rf "$W"' EXIT; fi
run() { # NAME N CMD... -> one line: name, checkpoints, seconds, checkpoints/s, peak MiB
  local name=$1 n=$2; shift 2
  /usr/bin/time -f "%e %M" -o "$W/t" "$@" >"$W/out" 2>"$W/err" || { cat "$W/out" "$W/err"; return 1; }
  read -r s kib <"$W/t"
  awk -v name="$name" -v n="$n" -v s="$s" -v kib="$kib" \
    'BEGIN { printf "%-38s %9d checkpoints %8.2f s %9.0f checkpoints/s %6.1f MiB\n", name, n, s, (s > 0 ? n / s : 0), kib / 1024 }'
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
echo "# $(date -u +%FT%TZ) load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
for n in ${SIZES:-100000 1000000}; do
  rm -f "$W"/*.db* "$W"/*.jsonl
  "$F" "$W/src.db" $((n / 10)) 10 >/dev/null
  echo "# $n checkpoints: $(stat -c %s "$W/src.db") bytes"
  run "stats --top 10" "$n" "$L" store stats "$W/src.db" --top 10 --json
  run "audit" "$n" "$L" store audit "$W/src.db" --allow-clear --json
  run "export" "$n" "$L" store export "$W/src.db" "$W/backup.jsonl"
  run "verify (backup file)" "$n" "$L" store verify "$W/backup.jsonl"
  run "import into a new file" "$n" "$L" store import "$W/backup.jsonl" "$W/imported.db"
  rm -f "$W/backup.jsonl" "$W"/imported.db*
  run "copy SQLite -> SQLite (verified)" "$n" "$L" store copy "$W/src.db" "$W/copy.db" --json
  grep -q '"mismatches":\[\]' "$W/out" || { echo "copy mismatches"; exit 1; }
  rm -f "$W"/copy.db*
  cp "$W/src.db" "$W/prune.db"
  run "prune --keep-latest 1" "$n" "$L" store prune "$W/prune.db" --keep-latest 1 --json
  rm -f "$W"/prune.db*
  cp "$W/src.db" "$W/enc.db"
  rotate "$n" "" "$W/enc.db"
  rm -f "$W"/enc.db*
  [[ -n "${LGCODEC_TEST_PG_URL:-}" ]] || continue
  fresh ${D}_src
  run "copy SQLite -> Postgres (verified)" "$n" "$L" store copy "$W/src.db" "$BASE/${D}_src" --json
  grep -q '"mismatches":\[\]' "$W/out" || { echo "copy mismatches"; exit 1; }
  rm -f "$W"/src.db*
  psqlc "VACUUM ANALYZE" "$BASE/${D}_src"
  echo "# $n checkpoints in Postgres: $(psqlc "SELECT pg_database_size('${D}_src')") bytes"
  run "Postgres: stats --top 10" "$n" "$L" store stats "$BASE/${D}_src" --top 10 --json
  run "Postgres: audit" "$n" "$L" store audit "$BASE/${D}_src" --allow-clear --json
  run "Postgres: export" "$n" "$L" store export "$BASE/${D}_src" "$W/backup.jsonl"
  fresh ${D}_import
  run "Postgres: import into a new database" "$n" "$L" store import "$W/backup.jsonl" "$BASE/${D}_import"
  rm -f "$W/backup.jsonl"; drop ${D}_import
  run "copy Postgres -> SQLite (verified)" "$n" "$L" store copy "$BASE/${D}_src" "$W/copy.db" --json
  grep -q '"mismatches":\[\]' "$W/out" || { echo "copy mismatches"; exit 1; }
  rm -f "$W"/copy.db*
  fresh ${D}_prune ${D}_src
  run "Postgres: prune --keep-latest 1" "$n" "$L" store prune "$BASE/${D}_prune" --keep-latest 1 --json
  drop ${D}_prune
  fresh ${D}_enc ${D}_src
  rotate "$n" "Postgres: " "$BASE/${D}_enc"
  drop ${D}_enc; drop ${D}_src
done
echo "# $(date -u +%FT%TZ) load average: $(cut -d' ' -f1-3 /proc/loadavg)"
