#!/usr/bin/env bash
# The pure-Python companion package (python/, langgraph-codec-keys):
#  1. `pip install ./python` into a scratch target, its build backend (flit-core, pinned
#     in python/pyproject.toml) downloaded by pip into an isolated build environment,
#     and it imports from there (its dependencies are the CI venv's: --no-deps);
#  2. its pytest suite against the real langgraph 1.2.22 (strict msgpack off, and on in
#     a second process), SqliteSaver and PostgresSaver (a throwaway server), and rows
#     the Rust crate writes (builds examples/emit_encrypted_vectors and lgcodec); the
#     shared key-error table (vectors/keys/key_errors.json), keys from
#     `lgcodec key generate`, and AllBlobsPostgresSaver audited by the lgcodec
#     built here (`lgcodec store audit --deny-inline`).
# pytest is not one of the reference pins (vectors/requirements.txt): installed here.
set -euo pipefail
STEP_PREFIX=python_package
# shellcheck source=../lib/pg_check.sh
source .ci/lib/pg_check.sh

install() {
    "$PY" -m pip install --quiet --disable-pip-version-check --no-deps --target "$WORK/site" ./python
    PYTHONPATH="$WORK/site" "$PY" -c 'import langgraph_codec_keys as k, sys; assert k.__file__.startswith(sys.argv[1]), k.__file__; print("installed:", k.__file__)' "$WORK/site"
}
step "pip install ./python (flit-core)" install
if ! "$PY" -c 'import pytest' 2>/dev/null; then
    step "pytest for the package's tests" "$PY" -m pip install --quiet pytest==9.2.0
fi
step "build the Rust rows' writers" cargo build --quiet --all-features --example emit_encrypted_vectors --bin lgcodec
step "pytest python/tests (sqlite + postgres, strict msgpack off and on)" \
    env LGCODEC_TEST_PG_URL="$URL" "$PY" -m pytest -q -p no:cacheprovider python/tests
