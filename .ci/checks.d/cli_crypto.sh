#!/usr/bin/env bash
# lgcodec decrypts Python-encrypted rows, encrypts rows Python reads, and rekeys.
set -euo pipefail
# The feature set of .ci/run's release build (the pip wheel's): nothing rebuilt.
cargo build --release --quiet --features cli,sqlite,postgres,metrics --bin lgcodec
"${PY:-python3}" vectors/check_cli_crypto.py target/release/lgcodec
