#!/usr/bin/env bash
# Layout detection on the committed stores of old releases (vectors/stores/): the SQLite
# half runs in the plain test suite; this check gives the Postgres half a throwaway
# server, where every fixture's dump.sql is restored into a fresh database and detected
# with reads only. Needs no Python or Node: regenerating the fixtures is a manual step
# (vectors/stores/README.md).
set -euo pipefail
STEP_PREFIX=store_layouts
# shellcheck source=../lib/pg_check.sh
source .ci/lib/pg_check.sh
step "rust tests (layouts of old stores, SQLite and Postgres)" \
    cargo test --quiet --features postgres --test store_layouts
