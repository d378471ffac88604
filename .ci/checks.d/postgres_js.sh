#!/usr/bin/env bash
# Rows written by the real LangGraphJS Postgres saver (@langchain/langgraph-checkpoint-
# postgres, pinned in vectors/postgres/js/package-lock.json) read with PostgresSaver
# exactly as the JS saver itself reads them, and as Python's PostgresSaver reads them.
# Starts its own PostgreSQL (vectors/postgres/pg_server.sh), stopped on exit.
#  1. npm ci in vectors/postgres/js (a fresh machine has only node and npm).
#  2. JS-only schema: the JS saver's setup (its migrations 0..4), a real LangGraphJS
#     graph (messages, Send fan-out, subgraph, interrupt + Command resume) and direct
#     put/putWrites of varied values; JS dumps its own getTuple/list reads.
#     Rust: verify refuses the schema (migration 4 < 9), setup completes it, every read
#     equals JS's; then Python's PostgresSaver makes the same reads and Rust's equal
#     them byte for byte.
#  3. The same with Rust's setup first (JS's setup then finds migration 9, does nothing).
set -euo pipefail
STEP_PREFIX=postgres_js
# shellcheck source=../lib/pg_check.sh
source .ci/lib/pg_check.sh
JS_DIR="vectors/postgres/js"
step "npm ci" npm ci --prefix "$JS_DIR" --no-audit --no-fund --loglevel=error
step "build postgres_js_rows" cargo build --quiet --all-features --example postgres_js_rows
RS="target/debug/examples/postgres_js_rows"

js_then_rust() {
    local schema="$1"; shift
    node "$JS_DIR/write_rows.mjs" "$URL" "$schema" "$WORK/$schema.json"
    "$RS" check "$URL" "$schema" "$WORK/$schema.json" "$@"
    "$PY" vectors/postgres/cross_language.py reads "$URL" "$schema" "$WORK/$schema.json" "$WORK/$schema.py.json"
    "$RS" python "$URL" "$schema" "$WORK/$schema.json" "$WORK/$schema.py.json"
}
rust_setup_first() {
    "$RS" setup "$URL" js_after_rust
    js_then_rust js_after_rust --rust-set-up
}
step "JS-only schema: JS writes, Rust and Python read" js_then_rust js_only
step "Rust setup first: JS writes, Rust and Python read" rust_setup_first
