#!/usr/bin/env bash
# The wheels Python teams install (docs/install.md), built and smoke-tested as a
# newcomer meets them:
#  1. one version: Cargo.toml's `version` (which maturin gives the `langgraph-codec`
#     wheel) = the companion's `__version__` (python/, whose pyproject takes it
#     dynamically) = the wheel's `langgraph-codec-keys==` pin;
#  2. the `langgraph-codec` wheel (pyproject.toml: its features, bindings, strip) built by
#     the maturin that pyproject.toml's build-system pins, with cargo's dev profile, and
#     the companion's wheel by pip (flit-core); their sizes. A published wheel is built
#     with `--release` (docs/install.md); here the dev profile reuses the dependencies
#     `.ci/run` has already compiled: `maturin build --release` took 386 s of a 2,529 s
#     CI run (log of 2026-11-29), the dev build 62 s. What this check tests (the wheel's
#     layout, its install into an empty venv, the binary without Rust, a real graph
#     re-keyed) does not depend on the optimisation level;
#  3. a new venv with nothing installed: `pip install` of the two wheel files (their
#     dependencies from the index, at the reference pins: vectors/requirements.txt as
#     constraints); with no cargo or rustc on PATH: `lgcodec --version`, the companion
#     imports, and `lgcodec store audit` of a copy of the quickstart's store
#     (vectors/sqlite/python_store.sqlite) is clean and leaves the file byte for byte
#     as it was (and its WAL empty);
#  4. that venv plus langgraph and its savers: a real graph writes under one key
#     through the companion, the wheel's lgcodec re-keys the store, and the graph reads
#     and resumes every thread under the new key alone, strict (.ci/lib/wheel_graph.py),
#     on a SQLite file and on a throwaway PostgreSQL.
set -euo pipefail
STEP_PREFIX=wheel
# shellcheck source=../lib/pg_check.sh
source .ci/lib/pg_check.sh
DIST="$WORK/dist"
SMOKE="$WORK/smoke"
# The smoke venv's commands, and nothing of Rust's (cargo and rustc live in ~/.cargo/bin).
NO_RUST_PATH="$SMOKE/bin:/usr/local/bin:/usr/bin:/bin"
VERSION="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"

versions() {
    "$PY" - <<'PYEOF'
import re, tomllib
cargo = tomllib.load(open("Cargo.toml", "rb"))["package"]["version"]
wheel = tomllib.load(open("pyproject.toml", "rb"))["project"]
companion = tomllib.load(open("python/pyproject.toml", "rb"))["project"]
init = open("python/src/langgraph_codec_keys/__init__.py", encoding="utf-8").read()
module = re.search(r'^__version__ = "([^"]+)"$', init, re.M).group(1)
pins = [d for d in wheel["dependencies"] if d.startswith("langgraph-codec-keys")]
assert "version" not in wheel and "version" in wheel["dynamic"], "pyproject.toml: version must be dynamic (Cargo.toml's)"
assert "version" not in companion and "version" in companion["dynamic"], "python/pyproject.toml: version must be dynamic (__version__)"
assert module == cargo, f"langgraph_codec_keys.__version__ {module} != Cargo.toml's {cargo}"
assert pins == [f"langgraph-codec-keys=={cargo}"], f"pyproject.toml pins {pins}, not langgraph-codec-keys=={cargo}"
print(f"version {cargo}: Cargo.toml, langgraph_codec_keys.__version__, the wheel's pin on it")
PYEOF
}
step "versions agree" versions

MATURIN="$("$PY" -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"])')"
tools() {
    python3 -m venv "$WORK/tools"
    "$WORK/tools/bin/pip" install --quiet --disable-pip-version-check "$MATURIN"
}
step "install $MATURIN (the build-system pin of pyproject.toml)" tools
step "maturin build --profile dev (the langgraph-codec wheel: lgcodec, the wheel's features)" \
    "$WORK/tools/bin/maturin" build --profile dev --quiet --out "$DIST"
step "pip wheel ./python (the langgraph-codec-keys wheel, flit-core)" \
    "$PY" -m pip wheel --quiet --disable-pip-version-check --no-deps -w "$DIST" ./python
WHEEL="$(ls "$DIST"/langgraph_codec-"$VERSION"-py3-none-*.whl)"
COMPANION="$(ls "$DIST"/langgraph_codec_keys-"$VERSION"-py3-none-any.whl)"
sizes() {
    local w
    for w in "$WHEEL" "$COMPANION"; do
        printf '%s: %d bytes (%.2f MiB)\n' "$(basename "$w")" "$(stat -c %s "$w")" \
            "$(echo "$(stat -c %s "$w") / 1048576" | bc -l)"
    done
    "$PY" -m zipfile -l "$WHEEL"
}
step "the wheels' sizes" sizes

smoke_install() {
    python3 -m venv "$SMOKE"
    local had; had="$("$SMOKE/bin/python" -m pip freeze --all --exclude pip --exclude setuptools)"
    [ -z "$had" ] || { echo "the new venv is not empty: $had"; return 1; }
    "$SMOKE/bin/pip" install --quiet --disable-pip-version-check -c vectors/requirements.txt \
        "$WHEEL" "$COMPANION"
    echo "installed: $("$SMOKE/bin/python" -m pip freeze | grep -c .) distributions"
}
step "pip install the two wheels into a new, empty venv" smoke_install

no_rust() {
    if env PATH="$NO_RUST_PATH" sh -c 'command -v cargo || command -v rustc'; then
        echo "cargo or rustc is on the smoke test's PATH"; return 1
    fi
    local got; got="$(env PATH="$NO_RUST_PATH" lgcodec --version)"
    [ "$got" = "lgcodec $VERSION" ] || { echo "lgcodec --version: $got"; return 1; }
    echo "$(env PATH="$NO_RUST_PATH" sh -c 'command -v lgcodec'): $got"
    env PATH="$NO_RUST_PATH" python -I -c 'import langgraph_codec_keys as k; print("import langgraph_codec_keys", k.__version__, "from", k.__file__)'
}
step "lgcodec --version and import langgraph_codec_keys, no cargo or rustc on PATH" no_rust

audit() {
    local dir="$WORK/audit" db="$WORK/audit/checkpoints.sqlite" before after
    mkdir "$dir"
    cp vectors/sqlite/python_store.sqlite "$db"
    before="$(sha256sum "$db")"
    # The published demo key that store is encrypted with (examples/quickstart.rs).
    env PATH="$NO_RUST_PATH" LANGGRAPH_AES_KEY=quickstart-demo-key-0123456789ab \
        lgcodec store audit "$db"
    after="$(sha256sum "$db")"
    [ "$before" = "$after" ] || { printf 'the audit changed the store:\n%s\n%s\n' "$before" "$after"; return 1; }
    # The file is in WAL mode: while the audit reads, SQLite's -wal and -shm exist; the
    # audit's last close removes them. Nothing may be left beside the store.
    local left
    left="$(cd "$dir" && ls -A | grep -v '^checkpoints.sqlite$' || true)"
    [ -z "$left" ] || { echo "the audit left files beside the store: $left"; return 1; }
    echo "store unchanged (sha256 ${after%% *}), nothing left beside it"
}
step "lgcodec store audit of the quickstart's store (a copy), clean and unchanged" audit

step "pip install langgraph and its savers into the smoke venv (reference pins)" \
    "$SMOKE/bin/pip" install --quiet --disable-pip-version-check -c vectors/requirements.txt \
    langgraph langgraph-checkpoint-sqlite langgraph-checkpoint-postgres psycopg-binary
step "graph under the companion's serializer, re-keyed by the wheel's lgcodec, resumed (sqlite, postgres)" \
    env PATH="$NO_RUST_PATH" "$SMOKE/bin/python" -I .ci/lib/wheel_graph.py "$WORK/graph.sqlite" "$URL"
