#!/usr/bin/env bash
# The core issue's first-instance target: the first instance of a 100-setting class over UserDefaults, in a fresh
# process each time, no slower than before the issue. Builds one small probe twice, against the library of this
# checkout and against the library at BASE (default f56ba04, the commit before the issue), in a temporary
# directory, then runs the two alternately, RUNS times each (default 5), and prints both medians and their ratio.
#
#   Benchmarks/compare-first-instance.sh [BASE] [RUNS]
#
# The probe's source is the same for both, so that only the library differs: it times `UserDefaultsStore(...)`
# and `Config100(store:)` as the in-package benchmark's "init 100 settings, first instance" row does. Takes two
# release builds of the library (a few minutes on two busy cores).
set -euo pipefail
base=${1:-f56ba04}
runs=${2:-5}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/compare-first-instance.XXXXXX")
trap 'rm -rf "$work"' EXIT

head_label="$(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet HEAD -- Sources/StorableConfig || echo +changes)"
base_label=$(git -C "$repo" rev-parse --short "$base")
mkdir -p "$work/library-$base_label"
git -C "$repo" archive "$base" | tar -x -C "$work/library-$base_label"

probe() {  # folder, library path
    local identity
    identity=$(basename "$2" | tr '[:upper:]' '[:lower:]')
    mkdir -p "$1/Sources/first-instance"
    cat > "$1/Package.swift" <<EOF
// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "first-instance",
    platforms: [.macOS(.v13)],
    dependencies: [.package(path: "$2")],
    targets: [
        .executableTarget(
            name: "first-instance", dependencies: [.product(name: "StorableConfig", package: "$identity")])
    ],
    swiftLanguageModes: [.v6]
)
EOF
    {
        echo "import Foundation"
        echo "import StorableConfig"
        echo ""
        echo "final class Config100: StorableConfig, @unchecked Sendable {"
        echo "    override class var namespace: String { \"bench\" }"
        for ((index = 0; index < 100; index++)); do echo "    @Setting var s$index = $index"; done
        echo "}"
        echo ""
        echo "@inline(never) func firstInstance(_ defaults: UserDefaults) -> UInt64 {"
        echo "    let start = DispatchTime.now().uptimeNanoseconds"
        echo "    let config = Config100(store: UserDefaultsStore(defaults))"
        echo "    let elapsed = DispatchTime.now().uptimeNanoseconds - start"
        echo "    withExtendedLifetime(config) {}"
        echo "    return elapsed"
        echo "}"
        echo ""
        echo "let name = \"storable-config-first-instance-\\(ProcessInfo.processInfo.processIdentifier)\""
        echo "let defaults = UserDefaults(suiteName: name)!"
        echo "defaults.removePersistentDomain(forName: name)"
        echo "print(firstInstance(defaults))"
        echo "defaults.removePersistentDomain(forName: name)"
    } > "$1/Sources/first-instance/main.swift"
    echo "building the probe against $2" >&2
    swift build -c release --package-path "$1" >&2
}

probe "$work/probe-head" "$repo"
probe "$work/probe-base" "$work/library-$base_label"

median() { sort -n | awk '{ values[NR] = $1 } END { print values[int((NR + 1) / 2)] }'; }

# One run each, not counted, so that neither side's first counted run reads its executable from the disk.
"$work/probe-head/.build/release/first-instance" > /dev/null
"$work/probe-base/.build/release/first-instance" > /dev/null
: > "$work/head.txt"
: > "$work/base.txt"
for ((run = 0; run < runs; run++)); do
    # Alternately first, so that neither side always runs right after the other.
    if ((run % 2 == 0)); then order="head base"; else order="base head"; fi
    for side in $order; do "$work/probe-$side/.build/release/first-instance" >> "$work/$side.txt"; done
done

head_median=$(median < "$work/head.txt")
base_median=$(median < "$work/base.txt")
ratio=$(awk -v a="$head_median" -v b="$base_median" 'BEGIN { printf "%.2f", a / b }')
verdict=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.0 ? "ok (≤ 1.00×)" : "MISSED (≤ 1.00×)") }')
echo "First instance of a 100-setting class over UserDefaults, fresh process, median of $runs ($(uname -sr), $(nproc) cores)"
echo ""
printf '%-14s  %12s  %s\n' "library" "median" "runs (ns)"
printf '%-14s  %9s ns  %s\n' "$head_label" "$head_median" "$(tr '\n' ' ' < "$work/head.txt")"
printf '%-14s  %9s ns  %s\n' "$base_label" "$base_median" "$(tr '\n' ' ' < "$work/base.txt")"
echo ""
echo "ratio $head_label / $base_label: ${ratio}×  $verdict"
