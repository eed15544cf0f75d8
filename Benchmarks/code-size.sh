#!/usr/bin/env bash
# The shared-core issue's machine-code target: the `.text` of the core module's objects (`swift build -c release`,
# no extra flags) and its release build time, beside swift-configuration's `Configuration` module built the same
# way in the same run. Each is built in a temporary build folder with its dependencies, then the module alone again,
# timed, so that the two build times are measured alike (a few minutes on two cores; Linux's `date +%N`).
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

# Builds one module of a package in release mode in a new build folder: first with its dependencies, then the
# module alone again (its sources touched), which is the build that is timed. Prints "seconds bytes"; a failed
# build prints its log on standard error and ends the script.
measure() {  # package path, module, scratch name, source folder of the module
    local start end
    build() {
        swift build -c release --package-path "$1" --target "$2" --scratch-path "$work/$3" >"$work/$3.log" 2>&1 || {
            cat "$work/$3.log" >&2
            kill -TERM $$
            exit 1
        }
    }
    build "$@"
    find "$4" -name '*.swift' -exec touch {} +
    start=$(date +%s%N)
    build "$@"
    end=$(date +%s%N)
    echo "$(((end - start) / 1000000)) $(text_bytes "$work/$3/release/$2.build")"
}

# swift-configuration's sources come from the Benchmarks package's dependency, resolved there.
swift package --package-path "$repo/Benchmarks" resolve >/dev/null
configuration=$(find "$repo/Benchmarks/.build/checkouts" -maxdepth 1 -name 'swift-configuration' | head -n 1)
[[ -n $configuration ]] || { echo "swift-configuration was not resolved under Benchmarks/.build/checkouts"; exit 1; }

read -r core_ms core_bytes < <(measure "$repo" StorableConfig core "$repo/Sources/StorableConfig")
read -r theirs_ms theirs_bytes < <(measure "$configuration" Configuration configuration \
    "$configuration/Sources/Configuration")
for figure in "$core_ms" "$core_bytes" "$theirs_ms" "$theirs_bytes"; do
    [[ $figure =~ ^[0-9]+$ && $figure -gt 0 ]] || { echo "a build gave no figures: see its log above" >&2; exit 1; }
done

awk -v cb="$core_bytes" -v cs="$core_ms" -v tb="$theirs_bytes" -v ts="$theirs_ms" -v target="$target_mb" '
BEGIN {
    cs /= 1000; ts /= 1000
    printf "%-42s %8.3f MB   %6.1f s\n", "StorableConfig (the core), release .text", cb / 1e6, cs
    printf "%-42s %8.3f MB   %6.1f s\n", "swift-configuration Configuration, release", tb / 1e6, ts
    printf "%-42s %8.2fx      %6.2fx\n", "ratio", cb / tb, cs / ts
    printf "core .text target at most %.2f MB: %s\n", target, (cb / 1e6 <= target ? "ok" : "MISSED")
}'
