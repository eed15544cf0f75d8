#!/usr/bin/env bash
# The shared-core issue's size targets: lines of code (non-blank, non-comment lines of the formatted sources in the
# working tree) of the core (the module that `import StorableConfig` needs) and of every library target together (the
# conformance kit included), per module and per folder, and every file over 400 lines. Exits non-zero only on a
# usage error: the figures are for the note, the targets are judged there.
#
#   Benchmarks/count-lines.sh [CORE_LIMIT] [TOTAL_LIMIT]    (defaults 6300 and 14571, the issue's)
set -euo pipefail
core_limit=${1:-6300}
total_limit=${2:-14571}
cd "$(dirname "$0")/.."

# A line of code: not blank, and not only a comment (`//`, `///`, `/* … */` lines).
count() { (($#)) || { echo 0; return; }; cat "$@" | grep -cvE '^[[:space:]]*$|^[[:space:]]*(//|/\*|\*)' || true; }

# The library targets: every Sources/StorableConfig* folder (executables and the C target are not libraries).
libraries=$(find Sources -mindepth 1 -maxdepth 1 -type d -name 'StorableConfig*' | sort)
total=0
for module in $libraries; do
    lines=$(count $(find "$module" -name '*.swift'))
    total=$((total + lines))
    printf '%-40s %6d\n' "$(basename "$module")" "$lines"
    for folder in $(find "$module" -mindepth 1 -type d | sort); do
        files=$(find "$folder" -maxdepth 1 -name '*.swift')
        [[ -n $files ]] && printf '  %-38s %6d\n' "${folder#"$module"/}" "$(count $files)"
    done
done
core=$(count $(find Sources/StorableConfig -name '*.swift'))
echo
printf '%-40s %6d   target at most %d: %s\n' "core (StorableConfig)" "$core" "$core_limit" \
    "$([[ $core -le $core_limit ]] && echo ok || echo MISSED)"
printf '%-40s %6d   target at most %d: %s\n' "every library target" "$total" "$total_limit" \
    "$([[ $total -le $total_limit ]] && echo ok || echo MISSED)"
long=$(find $libraries -name '*.swift' -exec wc -l {} + | awk '$2 != "total" && $1 > 400 { print "  " $2 ": " $1 }')
echo "files over 400 lines (all lines, comments too): ${long:+$'\n'}${long:-none}"
