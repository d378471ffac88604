#!/usr/bin/env bash
# Rust -> Python: rows encrypted by langgraph-codec decrypt and decode with the real
# Python EncryptedSerializer (run by .ci/run with PY set to the venv's python).
set -euo pipefail
OUT="$(mktemp -t rust_encrypted.XXXXXX.jsonl)"
trap 'rm -f "$OUT"' EXIT
cargo run --quiet --example emit_encrypted_vectors -- "$OUT"
"${PY:-python3}" vectors/check_rust_encrypted.py "$OUT"
