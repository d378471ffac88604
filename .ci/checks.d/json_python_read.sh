#!/usr/bin/env bash
# vectors/json_python_read.jsonl is what Python 4.3.2 reads from each json golden row;
# `cargo test --test interop json_golden_values` compares Rust's readings to it. Regenerated
# here with the CI venv: it must be current.
set -euo pipefail
start=$(date +%s)
"${PY:-python3}" vectors/json_python_read.py --check
echo "json_python_read: $(( $(date +%s) - start ))s"
