#!/usr/bin/env bash
# The outbox crash test's full run (issue 32): 100 SIGKILLs of a child process enqueueing and delivering 500
# mutations over TCP, a fresh child on the same folder after each, then a last child that delivers everything;
# checks that every mutation whose enqueue returned was applied exactly once (see
# IntegrationTests/Sources/OutboxCrashDriver/OutboxCrashRun.swift). CI runs the 10-kill version in OutboxCrashTests.
#
# Usage, from anywhere:   bash IntegrationTests/outbox-crash.sh [--kills 100] [--mutations 500] [--seed N] [--verbose]
# (any other option of the OutboxCrash command too). Exits 1 when a promised mutation was lost or applied twice.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -d /opt/swift/usr/bin ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi
echo "== building OutboxCrash and OutboxCrashChild (debug)" >&2
swift build --package-path "$here" --product OutboxCrashChild >&2
swift build --package-path "$here" --product OutboxCrash >&2
bin="$(swift build --package-path "$here" --show-bin-path)"
exec "$bin/OutboxCrash" --child "$bin/OutboxCrashChild" --kills 100 --mutations 500 "$@"
