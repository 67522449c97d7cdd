#!/usr/bin/env bash
# Keeps the test code compilable on Apple platforms at the package's minimums (iOS 15 / macOS 12 /
# tvOS 15 / watchOS 8), which this machine cannot build for, and warning-free in Swift 5 mode with
# complete concurrency checking (what a user of NetworkingTestSupport on Swift 5 sees).
#
#   bash .ci/apple-compat.sh           # the source checks, then a clean Swift 5 strict build (~1.5 min)
#   bash .ci/apple-compat.sh --quick   # the source checks only (a second)
#
# Checked in Tests/, Sources/NetworkingTestSupport/, and the Combine bridge (Sources/Networking/Bridging/, Apple-only
# code, and its tests in CombineBridge/Tests/); the rest of Sources/Networking has its own reviewers:
#  1. `.timeLimit(` only in the Support.swift of Tests/NetworkingTests (and of CombineBridge's tests): suites use `SuiteTimeLimit.oneMinute` (or `.threeMinutes`),
#     because TimeLimitTrait needs macOS 13 / iOS 16 / tvOS 16 / watchOS 9.
#  2. `Process(` only inside `#if os(macOS) || os(Linux)`: Foundation has no Process on iOS/tvOS/watchOS.
#  3. None of a short list of APIs newer than macOS 12 / iOS 15 that are easy to reach for by habit.
#     A line that uses one behind `if #available` / `guard #available` may say so with the comment
#     `// apple-compat: guarded` (as may an older API of the same name, e.g. DispatchTimeInterval.seconds).
#  4. `swift build --build-tests` in Swift 5 mode with -strict-concurrency=complete prints no warning.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

dirs=(Tests Sources/NetworkingTestSupport Sources/Networking/Bridging CombineBridge/Tests)
failed=0
fail() {
    echo "apple-compat: $*"
    failed=1
}

echo "== apple-compat: .timeLimit( only in the shared helper"
if hits=$(grep -rn --include='*.swift' '\.timeLimit(' "${dirs[@]}" | grep -v -E '^(Tests/NetworkingTests|CombineBridge/Tests/NetworkingCombineTests)/Support.swift:'); then
    echo "$hits"
    fail "use SuiteTimeLimit.oneMinute or .threeMinutes (Tests/NetworkingTests/Support.swift), not .timeLimit(...): TimeLimitTrait needs macOS 13 / iOS 16"
fi

echo "== apple-compat: Process only under #if os(macOS) || os(Linux)"
# Tracks #if/#elseif/#else/#endif nesting; a `Process(` line passes when an enclosing branch that is
# being taken is exactly `#if os(macOS) || os(Linux)` (or `os(Linux) || os(macOS)`).
if hits=$(find "${dirs[@]}" -name '*.swift' -print0 | xargs -0 awk '
    FNR == 1 { depth = 0 }
    {
        line = $0
        sub(/^[ \t]+/, "", line)
        if (line ~ /^#if[ \t(]/) {
            depth++
            cond = line
            sub(/^#if[ \t]*/, "", cond)
            sub(/[ \t]*\/\/.*$/, "", cond)
            guarding[depth] = (cond == "os(macOS) || os(Linux)" || cond == "os(Linux) || os(macOS)")
        } else if (line ~ /^#elseif/ || line ~ /^#else/) {
            guarding[depth] = 0
        } else if (line ~ /^#endif/) {
            if (depth > 0) depth--
        } else if (line ~ /(^|[^A-Za-z0-9_])Process\(/ && line !~ /^\/\//) {
            ok = 0
            for (i = 1; i <= depth; i++) if (guarding[i]) ok = 1
            if (!ok) print FILENAME ":" FNR ": " $0
        }
    }'); then :; fi
if [ -n "$hits" ]; then
    echo "$hits"
    fail "Process exists only on macOS and Linux: put the code under #if os(macOS) || os(Linux)"
fi

echo "== apple-compat: no APIs newer than macOS 12 / iOS 15 by habit"
newer='Task\.sleep\(for:|ContinuousClock|SuspendingClock|URL\(filePath:|\.appending\(path:|\.appending\(component:|'
newer+='\.path\(percentEncoded:|\.host\(percentEncoded:|\.query\(percentEncoded:|URL\.(temporaryDirectory|homeDirectory|currentDirectory|documentsDirectory)|'
newer+='#/|Regex[<(]|\.wholeMatch\(|\.firstMatch\(of:|\.ranges\(of:|\.trimmingPrefix\(|\.replacing\(|'
newer+='import Synchronization|Mutex<|Atomic<|U?Int128|withDiscardingTaskGroup|'
newer+='Duration\.(seconds|milliseconds)|\.seconds\([0-9.]+\)'
if hits=$(grep -rnE --include='*.swift' "$newer" "${dirs[@]}" | grep -v 'apple-compat: guarded' | grep -vE '^[^:]+:[0-9]+:[[:space:]]*///?'); then
    echo "$hits"
    fail "an API above is newer than macOS 12 / iOS 15: use the older one (Task.sleep(nanoseconds:), URL(fileURLWithPath:), appendingPathComponent, ...) or guard it with #available and mark the line"
fi

if [ "${1:-}" = "--quick" ]; then
    [ "$failed" = 0 ] && echo "apple-compat: source checks passed (build skipped: --quick)"
    exit "$failed"
fi

echo "== apple-compat: Swift 5 mode, -strict-concurrency=complete, clean build, zero warnings"
# A clean scratch path: SwiftPM does not print the warnings of modules it does not recompile.
scratch=.build-swift5
log=$(mktemp)
rm -rf "$scratch"
swift build --build-tests -v --scratch-path "$scratch" \
    -Xswiftc -swift-version -Xswiftc 5 -Xswiftc -strict-concurrency=complete >"$log" 2>&1 || {
    grep -E "(error|warning): " "$log" || tail -40 "$log"
    rm -f "$log"
    fail "the Swift 5 strict build failed"
    exit 1
}
# The flags must reach the compiler last (SwiftPM passes the manifest's -swift-version 6 first).
modes=$(grep -m1 -E -- "-module-name NetworkingTests " "$log" | grep -oE -- "-swift-version [0-9]+|-strict-concurrency=[a-z]+" | tr '\n' ' ')
case "$modes" in
    *"-swift-version 5 -strict-concurrency=complete ") ;;
    *) fail "the test target was not compiled in Swift 5 strict mode (flags seen: $modes)" ;;
esac
# (With -v, SwiftPM echoes the manifest's own compile command as "warning: 'main': …swift-frontend…"
# whenever the manifest is compiled anew, as in a fresh clone: that line is not a diagnostic.)
if grep -E "(^|: )warning: " "$log" | grep -v -E "^warning: '[^']+': .*swift-frontend" | sort -u; then
    fail "the Swift 5 strict-concurrency build printed warnings; the bar is zero"
fi
rm -f "$log"

[ "$failed" = 0 ] && echo "apple-compat: all checks passed"
exit "$failed"
