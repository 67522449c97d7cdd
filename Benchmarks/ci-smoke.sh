#!/usr/bin/env bash
# CI smoke run of the benchmarks, so they cannot rot: builds the Benchmarks package and runs every
# benchmark for at most two iterations with no warm-up (BENCHMARK_SMOKE=1). The benchmarks check their
# own results (every storm refreshes exactly once, every request gets the right token); no timing is
# judged here. Exits non-zero if the build or any benchmark fails.
#
# Usage, from anywhere:   bash Benchmarks/ci-smoke.sh
# BENCHMARKS_SCRATCH=<dir> builds elsewhere than Benchmarks/.build (e.g. for a cold build).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
if [ -d /opt/swift/usr/bin ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi
scratch="${BENCHMARKS_SCRATCH:-$here/.build}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

expected=(build-request concurrent-provider concurrent-raw sequential-provider sequential-raw
          storm-100-expired storm-100-jwt storm-100-valid storm-1000-expired storm-1000-jwt storm-1000-valid
          outbox-enqueue fsync-write-1k outbox-replay outbox-direct)

echo "== benchmarks: build and smoke run (BENCHMARK_SMOKE=1)"
started=$SECONDS
status=0
BENCHMARK_SMOKE=1 swift package --scratch-path "$scratch" --disable-sandbox benchmark run --no-progress >"$log" 2>&1 || status=$?
if [ "$status" -ne 0 ] || grep -q "The following benchmarks failed" "$log"; then
  cat "$log"
  echo "ci-smoke: the benchmarks failed (exit $status)"
  exit 1
fi
if grep -E "(^|: )warning: " "$log" | grep -v "/.build/checkouts/" | grep -q .; then
  grep -E "(^|: )warning: " "$log" | grep -v "/.build/checkouts/"
  echo "ci-smoke: the benchmark sources built with warnings; the bar is zero"
  exit 1
fi
for name in "${expected[@]}"; do
  if ! grep -qx "$name" "$log"; then
    cat "$log"
    echo "ci-smoke: benchmark '$name' did not report results"
    exit 1
  fi
done
echo "ci-smoke: all ${#expected[@]} benchmarks built and ran ($((SECONDS - started)) s)"
