#!/usr/bin/env bash
# Stores of old releases (vectors/stores/) against a throwaway server:
#  1. Layout detection: the SQLite half runs in the plain test suite; here every
#     Postgres fixture's dump.sql is restored into a fresh database and detected with
#     reads only.
#  2. tests/store/upgrade.rs with today's Python (PY, the CI venv: LGCODEC_PYTHON makes
#     the Python reads required): each old Postgres fixture (Python 1.0.0, 2.0.0, 2.0.8,
#     LangGraphJS 1.0.5) copied into a fresh SQLite file and a fresh Postgres database
#     and exported/imported, Python reading every target equal to its own
#     setup()-migrated copy, the source unchanged; `store upgrade` of the old SQLite and
#     Postgres stores (the all-`json` ones of langgraph-checkpoint 1.0.9 included: they
#     are Python's, not JS's; two at once, and Python's setup() at the same time), after which
#     Python reads them without setup() as its own migration gives them and resumes the
#     interrupted thread; refusals for 0.1 / JS / shallow; per-channel sizes of SQLite
#     rows equal to Python's serializer's. Regenerating the fixtures is a manual step
#     (vectors/stores/README.md).
set -euo pipefail
STEP_PREFIX=store_layouts
# shellcheck source=../lib/pg_check.sh
source .ci/lib/pg_check.sh
step "rust tests (layouts of old stores, SQLite and Postgres)" \
    cargo test --quiet --all-features --test store -- layouts::
step "old stores: copy from old Postgres, upgrade, sizes (Python reads them)" \
    env LGCODEC_PYTHON="$PY" cargo test --quiet --all-features --test store -- upgrade::
step "old pending sends (LangGraph 0.4) copied into Postgres (Python reads and resumes them)" \
    env LGCODEC_PYTHON="$PY" cargo test --quiet --all-features --test store -- sends::
