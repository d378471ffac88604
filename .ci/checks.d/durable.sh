#!/usr/bin/env bash
# DurableSaver's crash test with Python required: a child writing through the wrapper in
# async mode over a real SQLite file is killed with SIGKILL while writes are queued; the
# reopened file holds every flushed step, a gap-free prefix after it, whole put_writes
# calls, and Python's own SqliteSaver reads it (run by .ci/run with PY set). First, what
# LangGraph's own exit mode stores, the reference for DurableSaver's Exit flush.
set -euo pipefail
start=$SECONDS
"${PY:-python3}" vectors/durable/exit_mode.py
LGCODEC_PYTHON="${PY:-python3}" cargo test --quiet --all-features --test saver_durable_crash
echo "durable crash: $((SECONDS - start))s"
