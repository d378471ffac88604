#!/usr/bin/env bash
# Postgres connections as people deploy them (tests/pg_connect): TLS modes against a
# server with ssl=on and TLS-only pg_hba lines, libpq's PG* variables and ~/.pgpass
# (with psql run alongside as the reference), connection errors that name what was
# tried, and a real PgBouncer in each pool mode (installed here when missing). The tests start that server themselves (initdb, certificates made with the
# openssl command); they run when LGCODEC_TEST_PG_URL is set, which pg_check.sh does
# (and the shared server it starts is the plain, TLS-off one those tests also use).
set -euo pipefail
STEP_PREFIX=postgres_connect
# shellcheck source=../lib/pg_check.sh
source .ci/lib/pg_check.sh
if ! command -v openssl >/dev/null; then
    echo "postgres_connect: installing openssl (the tests make their certificates with it)"
    apt-get update -qq && apt-get install -y -qq --no-install-recommends openssl >/dev/null
fi
if ! command -v pgbouncer >/dev/null && [ ! -x /usr/sbin/pgbouncer ]; then
    # The pooler tests (tests/pg_connect/pooler.rs) run a real PgBouncer in transaction,
    # statement and session mode; without it they are skipped with a printed line.
    echo "postgres_connect: installing pgbouncer (the pooler tests run one)"
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends pgbouncer >/dev/null; } \
        || echo "postgres_connect: pgbouncer could not be installed; the pooler tests will say they were skipped"
fi
step "rust tests (tests/pg_connect: TLS, libpq variables and password file, errors, poolers)" \
    env LGCODEC_PYTHON="$PY" cargo test --quiet --all-features --test pg_connect
