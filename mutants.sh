#!/usr/bin/env bash
# Mutation checks on the core (cargo-mutants), as recorded in MUTANTS.md. Not part of CI.
#
#   ./mutants.sh GROUP SHARD [OUT_DIR]
#
# GROUP is one of crypto, msgpack, saver (the file sets and test binaries below);
# SHARD is cargo-mutants' `k/N` with round-robin sharding (mutant i runs when i % N == k,
# so shard 0/4 is a uniform quarter sample; 0/1 is everything). Results go to
# OUT_DIR/GROUP-k-of-N/mutants.out (default OUT_DIR: ./mutants.out.d).
#
# Mutants are applied in place (`--in-place`: the warm target/ is reused; a copied tree
# rebuilds every dependency, as copying loses the mtimes cargo's fingerprints rely on),
# so run this in a clone of its own and do not edit that clone while it runs; check
# `git status` there afterwards. The test targets are passed as cargo arguments (`-C`),
# so each mutant builds only those binaries, not every test target of the crate.
# `--baseline skip`: run the chosen tests once unmutated first (`BASELINE=run` does).
# `RERUN=FILE` tests only the mutants named in FILE (one a line, as in a run's
# `missed.txt`), e.g. to confirm that tests added for the survivors kill them. (Not
# `--iterate`: with `--shard` it re-shards what is left and tests other mutants.)
# Give shard 0/1 then, or the named mutants are sharded again.
# The saver group starts a throw-away PostgreSQL (vectors/postgres/pg_server.sh) so
# the Postgres saver's tests really run instead of skipping.
set -euo pipefail
cd "$(dirname "$0")"
group=${1:?group: crypto, msgpack or saver}
shard=${2:?shard, e.g. 0/4}
out=${3:-mutants.out.d}/$group-${shard/\//-of-}
mkdir -p "$out"

common=(--in-place --baseline "${BASELINE:-skip}" --timeout 60 --jobserver-tasks 1
    --features postgres,conformance --shard "$shard" --sharding round-robin --output "$out")
if [ -n "${RERUN:-}" ]; then
    while IFS= read -r name; do
        [ -n "$name" ] && common+=(--re "$(printf '%s' "$name" | sed 's/[][\\.+*?(){}|^$#&~-]/\\&/g')")
    done <"$RERUN"
fi

case $group in
crypto)
    # Every crypto file but aad.rs (covered in full by the first run).
    files=(--file 'src/crypto/*.rs' --exclude src/crypto/aad.rs)
    tests=(--lib --test crypto --test interop)
    ;;
msgpack)
    # src/msgpack has no unit tests: the lib test binary is not rebuilt per mutant.
    files=(--file 'src/msgpack/*.rs')
    tests=(--test codec --test codec_bounded_alloc --test interop)
    ;;
saver)
    # The conformance kit is proven by the 93-fault family (tests/saver/conformance_faults.rs);
    # writes.rs was covered in full by the first run.
    files=(--file 'src/saver/**/*.rs' --exclude 'src/saver/conformance/**'
        --exclude src/saver/types/writes.rs)
    tests=(--lib --test saver --test interop)
    # shellcheck source=vectors/postgres/pg_server.sh
    source vectors/postgres/pg_server.sh
    ;;
*)
    echo "unknown group $group" >&2
    exit 2
    ;;
esac

if [ -n "${RERUN:-}" ]; then
    # Only the files named: cargo-mutants 27.1.0 lets "delete field" mutants through
    # `--re` filters, so without this a rerun tests every such mutant of the group.
    files=()
    for f in $(cut -d: -f1 "$RERUN" | sort -u); do files+=(--file "$f"); done
fi

start=$(date +%s)
status=0
cargo_args=()
for t in "${tests[@]}"; do cargo_args+=("-C=$t"); done
cargo mutants "${common[@]}" "${files[@]}" "${cargo_args[@]}" || status=$?
echo "mutants $group $shard: $(($(date +%s) - start)) s, exit $status (2 = some missed)"
