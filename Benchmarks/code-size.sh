#!/usr/bin/env bash
# The shared-core issue's machine-code target: the `.text` of the core module's objects (`swift build -c release`,
# no extra flags) and its release build time, beside swift-configuration's `Configuration` module built the same
# way in the same run. Each is built from scratch in a temporary build folder, one after the other, so that the
# two build times are measured alike (a few minutes on two cores).
#
#   Benchmarks/code-size.sh [TARGET_MB]    (default 0.9, the issue's)
set -euo pipefail
target_mb=${1:-0.9}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/code-size.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The sum of the `.text` sections of the objects under a module's build folder, in bytes.
text_bytes() {
    find "$1" -name '*.o' -print0 | xargs -0 size -A | awk '$1 == ".text" { sum += $2 } END { print sum + 0 }'
}

# Builds one module of a package in release mode in a new build folder; prints "seconds bytes".
measure() {  # package path, module, scratch name
    local start end
    start=$(date +%s.%N)
    swift build -c release --package-path "$1" --target "$2" --scratch-path "$work/$3" >"$work/$3.log" 2>&1 \
        || { cat "$work/$3.log"; exit 1; }
    end=$(date +%s.%N)
    echo "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }') $(text_bytes "$work/$3/release/$2.build")"
}

# swift-configuration's sources come from the Benchmarks package's dependency, resolved there.
swift package --package-path "$repo/Benchmarks" resolve >/dev/null
configuration=$(find "$repo/Benchmarks/.build/checkouts" -maxdepth 1 -name 'swift-configuration' | head -n 1)
[[ -n $configuration ]] || { echo "swift-configuration was not resolved under Benchmarks/.build/checkouts"; exit 1; }

read -r core_seconds core_bytes < <(measure "$repo" StorableConfig core)
read -r theirs_seconds theirs_bytes < <(measure "$configuration" Configuration configuration)

awk -v cb="$core_bytes" -v cs="$core_seconds" -v tb="$theirs_bytes" -v ts="$theirs_seconds" -v target="$target_mb" '
BEGIN {
    printf "%-42s %8.3f MB   %6.1f s\n", "StorableConfig (the core), release .text", cb / 1e6, cs
    printf "%-42s %8.3f MB   %6.1f s\n", "swift-configuration Configuration, release", tb / 1e6, ts
    printf "%-42s %8.2fx      %6.2fx\n", "ratio", cb / tb, cs / ts
    printf "core .text target at most %.2f MB: %s\n", target, (cb / 1e6 <= target ? "ok" : "MISSED")
}'
