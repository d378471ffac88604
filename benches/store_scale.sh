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
    'BEGIN { printf "%-34s %9d checkpoints %8.2f s %9.0f checkpoints/s %6.1f MiB\n", name, n, s, (s > 0 ? n / s : 0), kib / 1024 }'
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
done
echo "# $(date -u +%FT%TZ) load average: $(cut -d' ' -f1-3 /proc/loadavg)"
