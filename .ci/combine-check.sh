#!/usr/bin/env bash
# Compiles the library's Combine bridge (Sources/Networking/Bridging) against OpenCombine and runs its tests,
# in the CombineBridge package: Combine is not on Linux, and the library keeps zero dependencies (there the
# bridge compiles only where Combine is, and to nothing on Linux). See Docs/Combine.md, "How it is tested".
#
#   bash .ci/combine-check.sh
#
# Checks: the package builds with zero warnings (the bridge's files, its tests, and the library they use),
# its code passes `swift format lint --strict`, every test passes, and passes again under ThreadSanitizer
# (in a scratch folder of its own, CombineBridge/.build-tsan, gitignored by `.build*/`). Prints how long
# each step took.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "== combine-check: swift format lint --strict (the bridge's sources with the library's rules are linted by .ci/run)"
swift format lint --strict --recursive CombineBridge/Tests CombineBridge/Package.swift

echo "== combine-check: build against OpenCombine (zero warnings)"
start=$(date +%s)
swift build --package-path CombineBridge --build-tests 2>&1 | tee "$log"
built=$(($(date +%s) - start))
# Warnings of our own code only: OpenCombine's are its own (SwiftPM hides a remote package's anyway).
if grep -E "(^|: )warning: " "$log" | grep -v "/checkouts/OpenCombine/"; then
    echo "combine-check: the build printed warnings; the bar is zero"
    exit 1
fi
echo "combine-check: built in ${built} s"

echo "== combine-check: tests"
start=$(date +%s)
swift test --package-path CombineBridge --skip-build
tested=$(($(date +%s) - start))
echo "combine-check: tests ran in ${tested} s (build ${built} s)"

# The bridge's locks, continuations and cancellation races: TSan fails the run on any data race it sees.
echo "== combine-check: tests under ThreadSanitizer"
start=$(date +%s)
swift test --package-path CombineBridge --sanitize=thread --scratch-path CombineBridge/.build-tsan
echo "combine-check: tests under ThreadSanitizer (with their build) in $(($(date +%s) - start)) s; build ${built} s, tests ${tested} s"
