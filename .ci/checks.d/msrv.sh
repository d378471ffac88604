#!/usr/bin/env bash
# The crate type-checks on its MSRV (Cargo.toml `rust-version`), every target and
# feature, with the newest dependencies that declare that Rust version: cargo's
# MSRV-aware resolver (`incompatible-rust-versions = fallback`) picks them in a scratch
# copy, so the committed Cargo.lock (newest versions, for everyone else) is untouched.
set -euo pipefail
MSRV="$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)"
if ! rustup toolchain install "$MSRV" --profile minimal --no-self-update >/dev/null 2>&1; then
  # The toolchain comes from rustup's servers; a machine that cannot reach them cannot
  # run this check. Say so loudly rather than fail the whole run on a download.
  echo "MSRV CHECK SKIPPED: rustup could not install Rust $MSRV on this machine" >&2
  exit 0
fi
SCRATCH="$(mktemp -d -t lgcodec_msrv.XXXXXX)"
trap 'rm -rf "$SCRATCH"' EXIT
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$SCRATCH"
cd "$SCRATCH"
CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS=fallback cargo update --quiet
# ar_archive_writer 0.5.x (a build dependency of psm, under stacker) declares
# rust-version 1.85 but uses let chains (stable in 1.88); psm 0.1.26 predates it.
cargo update --quiet -p psm --precise 0.1.26
cargo "+$MSRV" check --quiet --all-features --all-targets
cargo "+$MSRV" check --quiet --no-default-features
echo "builds on Rust $MSRV"
