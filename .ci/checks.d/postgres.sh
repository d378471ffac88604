#!/usr/bin/env bash
# PostgresSaver against a real PostgreSQL (started here, stopped on exit) and against
# Python's PostgresSaver on the same tables (run by .ci/run with PY set to the CI
# venv's python; installs PostgreSQL with apt-get if the machine has none).
#  1. Rust tests: conformance FULL plain and encrypted, schema/verify, row semantics,
#     delta history past 1,024 checkpoints, 16x1000 load, connection killed mid-put.
#  2. Cross-language, plain: Python sets up and runs a real graph; Rust's setup after it
#     changes nothing; Rust reads every checkpoint/write/history as Python did; Rust
#     appends a checkpoint; Python resumes from it and finishes.
#  3. The same encrypted (one LANGGRAPH_AES_KEY, Rust writing every value as a blob),
#     with Rust's setup first and Python's after it changing nothing.
set -euo pipefail
STEP_PREFIX=postgres
# shellcheck source=../lib/pg_check.sh
source .ci/lib/pg_check.sh
XL="vectors/postgres/cross_language.py"

step "rust tests (conformance plain+encrypted, schema, semantics, load, faults, DurableSaver over Postgres)" \
    cargo test --quiet --all-features --test saver -- postgres:: durable::
step "rust tests (a Postgres failure reaches tokio_postgres::Error through source())" \
    cargo test --quiet --all-features --test architecture -- error_contract::
step "build postgres_crosscheck" cargo build --quiet --all-features --example postgres_crosscheck
RS="target/debug/examples/postgres_crosscheck"

same_fingerprint() {
    if [ "$1" != "$2" ]; then
        echo "postgres: setup changed the schema:"; diff <(echo "$1") <(echo "$2") || true
        return 1
    fi
}

plain() {
    "$PY" "$XL" schema "$URL" xl_plain
    "$PY" "$XL" run "$URL" xl_plain "$WORK/plain.json"
    local before after id
    before="$("$PY" "$XL" fingerprint "$URL" xl_plain)"
    "$RS" verify "$URL" xl_plain
    "$RS" setup "$URL" xl_plain
    after="$("$PY" "$XL" fingerprint "$URL" xl_plain)"
    same_fingerprint "$before" "$after"
    "$RS" compare "$URL" xl_plain "$WORK/plain.json"
    id="$("$RS" append "$URL" xl_plain)"
    "$PY" "$XL" resume "$URL" xl_plain "$id"
}

encrypted() {
    export LANGGRAPH_AES_KEY="lgcodec-ci-key-0123456789abcdef!"
    local before after id
    "$RS" setup "$URL" xl_enc
    before="$("$PY" "$XL" fingerprint "$URL" xl_enc)"
    "$PY" "$XL" run "$URL" xl_enc "$WORK/enc.json" --encrypted
    after="$("$PY" "$XL" fingerprint "$URL" xl_enc)"
    same_fingerprint "$before" "$after"
    "$RS" compare "$URL" xl_enc "$WORK/enc.json" --encrypted
    id="$("$RS" append "$URL" xl_enc --encrypted --all-blobs)"
    "$PY" "$XL" resume "$URL" xl_enc "$id" --encrypted
    unset LANGGRAPH_AES_KEY
}

step "cross-language plain (Python graph -> Rust -> Python)" plain
step "cross-language encrypted (Rust setup first, all values in blobs)" encrypted
