#!/usr/bin/env bash
# The fuzz targets (fuzz/, cargo-fuzz layout, its own workspace) build on the stable
# toolchain, run every seed from the golden vectors once, then mutate them for a few
# seconds each with a fixed seed. Without `cargo fuzz` there is no coverage
# instrumentation, so this is a smoke run that keeps the targets compiling and
# panic-free on the seeds; real fuzzing is `cargo fuzz run` (docs/testing.md).
set -euo pipefail
cargo build --quiet --locked --manifest-path fuzz/Cargo.toml
# seed_corpus.py reads the CLI's JSON view; the binary .ci/run built (nothing rebuilt).
cargo build --quiet --all-features --bin lgcodec
CORPUS="$(mktemp -d -t lgcodec_fuzz.XXXXXX)"
trap 'rm -rf "$CORPUS"' EXIT
FUZZ_CORPUS_DIR="$CORPUS" LGCODEC_BIN=target/debug/lgcodec "${PY:-python3}" fuzz/seed_corpus.py
for bin in fuzz/fuzz_targets/*.rs; do
  t="$(basename "$bin" .rs)"
  mkdir -p "$CORPUS/$t"
  # libFuzzer writes its run log on stderr; keep the last lines for the CI log.
  if ! fuzz/target/debug/"$t" -seed=1 -max_total_time=5 -rss_limit_mb=1024 -artifact_prefix=fuzz/target/ \
    "$CORPUS/$t" 2>"fuzz/target/$t.log"; then
    tail -40 "fuzz/target/$t.log"
    echo "fuzz target $t failed" >&2
    exit 1
  fi
  printf '%s: %s\n' "$t" "$(grep -E '^Done|DONE' "fuzz/target/$t.log" | tail -1)"
done
