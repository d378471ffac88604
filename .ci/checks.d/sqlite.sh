#!/usr/bin/env bash
# One SQLite file shared with Python LangGraph: a real graph on langgraph-checkpoint-sqlite's
# SqliteSaver, read back and continued by langgraph-codec's SqliteSaver, then resumed and
# finished by Python; plain and with EncryptedSerializer (run by .ci/run with PY set).
set -euo pipefail
start=$SECONDS
cargo build --quiet --all-features --example sqlite_interop
BIN=target/debug/examples/sqlite_interop
"${PY:-python3}" -u vectors/sqlite/interop.py "$BIN"
LANGGRAPH_AES_KEY="ci-interop-key-0123456789abcdef!" "${PY:-python3}" -u vectors/sqlite/interop.py "$BIN" --encrypted
echo "sqlite interop: $((SECONDS - start))s"
