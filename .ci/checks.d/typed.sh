#!/usr/bin/env bash
# Rust -> Python: typed values written by langgraph-codec decode with the real Python
# package to the values they must equal (built in the script, not from the Rust output).
set -euo pipefail
OUT="$(mktemp -t rust_typed.XXXXXX.jsonl)"
trap 'rm -f "$OUT"' EXIT
cargo run --quiet --example emit_typed_vectors -- "$OUT"
"${PY:-python3}" vectors/check_rust_typed.py "$OUT"
