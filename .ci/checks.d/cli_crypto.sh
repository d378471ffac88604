#!/usr/bin/env bash
# lgcodec decrypts Python-encrypted rows, encrypts rows Python reads, and rekeys.
set -euo pipefail
cargo build --release --quiet --features cli --bin lgcodec
"${PY:-python3}" vectors/check_cli_crypto.py target/release/lgcodec
