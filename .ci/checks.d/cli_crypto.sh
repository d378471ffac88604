#!/usr/bin/env bash
# lgcodec decrypts Python-encrypted rows, encrypts rows Python reads, and rekeys.
set -euo pipefail
# The binary .ci/run built with --all-features: nothing rebuilt.
cargo build --quiet --all-features --bin lgcodec
"${PY:-python3}" vectors/check_cli_crypto.py target/debug/lgcodec
