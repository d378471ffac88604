#!/usr/bin/env bash
# Vintage and LangGraphJS rows (vectors/wild/rows.jsonl): the recorded readings are
# re-derived with the CI venv's Python langgraph-checkpoint 4.3.2 (no old release is
# reinstalled: the rows themselves are committed), then the Rust reader is checked
# against them.
set -euo pipefail
start=$(date +%s)
PY="${PY:-python3}"
OUT="$(mktemp -t wild_rows.XXXXXX.jsonl)"
IN="$(mktemp -t wild_in.XXXXXX.jsonl)"
trap 'rm -f "$OUT" "$IN"' EXIT
# Strip the recorded readings, read every row again with 4.3.2, and compare.
"$PY" - vectors/wild/rows.jsonl "$IN" <<'PYEOF'
import json, sys
keep = ("writer", "label", "type", "data")
with open(sys.argv[2], "w") as out:
    for line in open(sys.argv[1]):
        row = json.loads(line)
        out.write(json.dumps({k: row[k] for k in keep}) + "\n")
PYEOF
"$PY" vectors/wild/read_with_432.py "$IN" > "$OUT"
if ! cmp -s "$OUT" vectors/wild/rows.jsonl; then
    echo "wild: Python 4.3.2 now reads vectors/wild/rows.jsonl differently from the recorded readings" >&2
    diff <(cut -c1-300 vectors/wild/rows.jsonl) <(cut -c1-300 "$OUT") | head -20 >&2
    exit 1
fi
cargo test --quiet --test interop -- wild_rows::
echo "wild: $(wc -l < vectors/wild/rows.jsonl) rows agree with Python 4.3.2 ($(( $(date +%s) - start ))s)"
