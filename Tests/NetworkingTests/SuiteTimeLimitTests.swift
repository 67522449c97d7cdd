import Testing

@Suite("Suite time limit", SuiteTimeLimit.oneMinute)
struct SuiteTimeLimitTests {
    @Test("SuiteTimeLimit.oneMinute gives every test of its suite a one-minute limit where TimeLimitTrait exists")
    func oneMinuteReachesTheSuitesTests() throws {
        guard #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) else { return }
        let test = try #require(Test.current)
        #expect(test.timeLimit == .seconds(60))   // apple-compat: guarded
    }
}

/// Not nested in the suite above: a nested suite keeps its parent's limit when that is shorter.
@Suite("Suite time limit for storms", SuiteTimeLimit.threeMinutes)
struct StormSuiteTimeLimitTests {
    @Test("SuiteTimeLimit.threeMinutes gives every test of its suite three minutes where TimeLimitTrait exists")
    func threeMinutesReachTheSuitesTests() throws {
        guard #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) else { return }
        let test = try #require(Test.current)
        #expect(test.timeLimit == .seconds(180))   // apple-compat: guarded
    }
}
