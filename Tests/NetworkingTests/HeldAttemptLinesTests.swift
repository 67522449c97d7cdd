import Foundation
import Testing

@testable import Networking

/// A logger holds a call's failed attempts' lines until the call goes on or ends; a call whose end it is
/// never told of (a wrapping monitor that filters `requestDidFinish`) must not make it grow without bound.
@Suite("Logging: held attempt lines are bounded")
struct HeldAttemptLinesTests {
    private func attempt(_ line: String) -> HeldAttemptLines.Attempt {
        HeldAttemptLines.Attempt(lines: [line], saysMore: false)
    }

    @Test func theOldestCallIsDroppedPastTheCapacity() {
        // GIVEN room for two calls
        let held = HeldAttemptLines(capacity: 2)
        let first = RequestContext(endpoint: TestEndpoint())
        let second = RequestContext(endpoint: TestEndpoint())
        let third = RequestContext(endpoint: TestEndpoint())
        // WHEN three calls hold lines, the first twice
        held.hold(attempt("1a"), for: first)
        held.hold(attempt("2a"), for: second)
        held.hold(attempt("1b"), for: first)
        held.hold(attempt("3a"), for: third)
        // THEN the call held first is dropped; the others keep theirs
        #expect(held.take(for: first).isEmpty)
        #expect(held.take(for: second).flatMap(\.lines) == ["2a"])
        #expect(held.take(for: third).flatMap(\.lines) == ["3a"])
        #expect(held.count == 0)
    }

    @Test func aLoggerHoldsAtMostTenThousandCalls() {
        #expect(HeldAttemptLines().capacity == 10_000)
    }
}
