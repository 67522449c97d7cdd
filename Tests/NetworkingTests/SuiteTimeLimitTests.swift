import Testing

/// Expects the running test's time limit to be `seconds`, where `TimeLimitTrait` exists.
private func expectTimeLimit(of seconds: Int64) throws {
    guard #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) else { return }
    let test = try #require(Test.current)
    #expect(test.timeLimit == .seconds(seconds))   // apple-compat: guarded
}

@Suite("Suite time limit", SuiteTimeLimit.oneMinute)
struct SuiteTimeLimitTests {
    @Test("SuiteTimeLimit.oneMinute gives every test of its suite a one-minute limit where TimeLimitTrait exists")
    func oneMinuteReachesTheSuitesTests() throws {
        try expectTimeLimit(of: 60)
    }

    @Test("a wait on a Signal ends when its task is cancelled, so a test past its time limit cannot hang the run")
    func aSignalWaitEndsWhenItsTaskIsCancelled() async {
        // GIVEN a signal that never fires, and a task waiting on it
        let signal = Signal()
        let waiter = Task {
            await signal.wait()
            return Task.isCancelled
        }
        // WHEN the task is cancelled, THEN its wait returns
        waiter.cancel()
        #expect(await waiter.value)
    }
}

/// Not nested in the suite above: a nested suite keeps its parent's limit when that is shorter.
@Suite("Suite time limit for storms", SuiteTimeLimit.threeMinutes)
struct StormSuiteTimeLimitTests {
    @Test("SuiteTimeLimit.threeMinutes gives every test of its suite three minutes where TimeLimitTrait exists")
    func threeMinutesReachTheSuitesTests() throws {
        try expectTimeLimit(of: 180)
    }
}
