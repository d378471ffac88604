#!/usr/bin/env bash
# The crate as crates.io would get it: package it (benches, fuzz, CI scripts and the
# bench payloads are left out, see `exclude` in Cargo.toml), unpack it and run its
# tests from there, so no test leans on a file the package does not ship.
set -euo pipefail
REPO="$(pwd)"
cargo package --no-verify --allow-dirty --quiet
CRATE="$(ls -t target/package/langgraph-codec-*.crate | head -1)"
WORK="$(mktemp -d -t lgcodec-package.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
tar xzf "$CRATE" -C "$WORK"
cd "$WORK"/langgraph-codec-*/
# Reuse the compiled dependencies of the main build; only the crate itself rebuilds.
CARGO_TARGET_DIR="$REPO/target" cargo test --quiet --all-features 2>&1 \
  | grep -E '^(test result|error|failures|---- )' | sort | uniq -c
echo "package: every test of the unpacked crate passed"
