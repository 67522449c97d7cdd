import Networking
import Testing

/// README's "Versioning" snippet: a `switch` over `NetworkError` with a `default:` clause, which keeps compiling
/// when a minor version adds a case.
@Suite struct VersioningDocSnippetTests {
    enum Shown: Equatable {
        case serverError(Int)
        case signIn
        case error
    }

    /// The README snippet's `switch`, returning what it would show.
    func shown(for error: NetworkError) -> Shown {
        switch error {
        case .invalidStatusCode(let status): return .serverError(status)
        case .sessionExpired: return .signIn
        default: return .error   // also the cases that later minor versions add
        }
    }

    @Test func aSwitchWithADefaultHandlesTheCasesItNamesAndEveryOther() {
        // GIVEN errors the switch names and errors it leaves to `default`
        // WHEN each is matched / THEN the named cases get their own handling, the rest the default
        #expect(shown(for: .invalidStatusCode(503)) == .serverError(503))
        #expect(shown(for: .sessionExpired) == .signIn)
        #expect(shown(for: .notCached) == .error)
        #expect(shown(for: .responseTooLarge(limit: 1)) == .error)
    }
}
