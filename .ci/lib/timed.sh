# Sourced by the .ci/checks.d scripts: `step NAME CMD...` runs CMD and prints how long
# it took, prefixed with "$STEP_PREFIX: ".
now_ms() { date +%s%3N; }
step() {
    local name="$1"; shift
    local t0; t0="$(now_ms)"
    "$@"
    echo "${STEP_PREFIX:-step}: $name: $(( $(now_ms) - t0 )) ms"
}
