import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The app's own error, as an error mapper (or a response envelope) makes it: its payload holds what the
/// server said, which may name the user or echo a token, and its descriptions repeat it.
private enum AccountError: Error, Equatable, CustomStringConvertible, LocalizedError, CustomNSError {
    case locked(message: String)
    case closed

    var description: String { "AccountError: \(errorDescription ?? "")" }
    var errorDescription: String? {
        switch self {
        case .locked(let message): return message
        case .closed: return "closed"
        }
    }
    var errorCode: Int { self == .closed ? 4_010 : 4_023 }

    static func == (lhs: AccountError, rhs: AccountError) -> Bool {
        switch (lhs, rhs) {
        case (.closed, .closed): return true
        case (.locked, .locked): return true
        default: return false
        }
    }
}

/// A logger whose lines are kept.
private func keepingLogger(_ lines: Recorder<String>, verbosity: NetworkLogger.Verbosity = .basic) -> NetworkLogger {
    NetworkLogger(verbosity: verbosity, sink: LogSink { lines.append($0) })
}

@Suite("Logging: every attempt gets its line", SuiteTimeLimit.oneMinute)
struct AttemptLogTests {
    @Test func aCallRefreshedAfterA401LogsThe401AttemptThenTheRefreshThenTheSummary() async throws {
        // GIVEN an expired access token and a basic logger
        let api = MockAuthServer()
        let lines = Recorder<String>()
        let (provider, _) = api.makeAuthenticatedProvider(monitors: [keepingLogger(lines)])
        // WHEN a call gets 401, the token is refreshed and the call is sent again
        _ = try await provider.response(api.resource("/me"))
        await provider.waitForMonitors()
        // THEN the 401 attempt has its own line, with its status and the error it ended with
        let log = lines.all
        let attempt = try #require(log.firstIndex { $0.hasPrefix("attempt 1: GET https://api.example.com/v1/me → 401 in ") })
        #expect(log[attempt].hasSuffix(" ms: The server answered with unacceptable status code 401."))
        // AND it comes first, then the refresh call's own line, then the call's summary, of the same shape as ever
        let refresh = try #require(log.firstIndex { $0.hasPrefix("POST https://api.example.com/v1/auth/refresh → 200 in ") })
        let summary = try #require(log.firstIndex { $0.hasPrefix("GET https://api.example.com/v1/me → 200 in ") })
        #expect(attempt < refresh && refresh < summary)
        #expect(log[summary].contains(" ms, 2 attempts, "))
        #expect(log.count == 3)
        expectHidden(["access-0", "access-1", "refresh-0", "refresh-1"], in: log.joined(separator: "\n"), "log")
    }

    @Test func aRetried503LogsEachFailedAttemptBeforeTheSummary() async throws {
        // GIVEN a server busy twice, and a retry policy
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(503), .status(503), .json(User(id: 1, name: "Kim")))
        let lines = Recorder<String>()
        let provider = server.makeProvider(
            interceptor: RetryPolicy(random: { 0 }), monitors: [keepingLogger(lines)], sleep: RecordedDelays().sleep)
        // WHEN the call is made
        _ = try await provider.request(TestEndpoint(), as: User.self)
        await provider.waitForMonitors()
        // THEN each 503 has its line, numbered, and the summary keeps its shape
        let log = lines.all
        #expect(log.count == 3)
        for (index, line) in log.prefix(2).enumerated() {
            #expect(line.hasPrefix("attempt \(index + 1): GET https://api.example.com/v1/users/1 → 503 in "))
            #expect(line.hasSuffix(" ms: The server answered with unacceptable status code 503."))
        }
        #expect(log.last?.hasPrefix("GET https://api.example.com/v1/users/1 → 200 in ") == true)
        #expect(log.last?.hasSuffix(" ms, 3 attempts, 21 bytes") == true)
    }

    @Test func aCallThatGivesUpLogsEveryAttemptTheLastIncluded() async throws {
        // GIVEN a server that stays busy, and at most 2 attempts
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(503), .status(503))
        let lines = Recorder<String>()
        let provider = server.makeProvider(
            interceptor: RetryPolicy(random: { 0 }), maximumAttempts: 2, monitors: [keepingLogger(lines)], sleep: RecordedDelays().sleep)
        // WHEN the call fails
        await #expect(throws: NetworkError.self) { _ = try await provider.response(TestEndpoint()) }
        await provider.waitForMonitors()
        // THEN both attempts have their line, then the summary
        let log = lines.all
        #expect(log.count == 3)
        #expect(log.first?.hasPrefix("attempt 1: GET https://api.example.com/v1/users/1 → 503 in ") == true)
        #expect(log.dropFirst().first?.hasPrefix("attempt 2: GET https://api.example.com/v1/users/1 → 503 in ") == true)
        #expect(log.last?.hasPrefix("GET https://api.example.com/v1/users/1 → failed in ") == true)
        #expect(log.last?.contains(" ms, 2 attempts: The request was given up after 2 attempts") == true)
    }

    @Test func aRetriedTransportFailureGetsItsLineWithItsURLErrorCode() async throws {
        // GIVEN a connection that times out once
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .failure(URLError(.timedOut)), .json(User(id: 1, name: "Kim")))
        let lines = Recorder<String>()
        let provider = server.makeProvider(
            interceptor: RetryPolicy(random: { 0 }), monitors: [keepingLogger(lines)], sleep: RecordedDelays().sleep)
        // WHEN the call is retried and succeeds
        _ = try await provider.response(TestEndpoint())
        await provider.waitForMonitors()
        // THEN the attempt that got no response says so, with the URLError's code
        let log = lines.all
        #expect(log.count == 2)
        #expect(log.first?.hasPrefix("attempt 1: GET https://api.example.com/v1/users/1 → failed in ") == true)
        #expect(log.first?.hasSuffix(" ms: The request failed without a complete response: URLError -1001 (.timedOut).") == true)
        #expect(log.last?.hasSuffix(" ms, 2 attempts, 21 bytes") == true)
    }

    @Test func aSingleAttemptCallStaysOneLine() async throws {
        // GIVEN one call answered 200 and one answered 404 (not retried)
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(User(id: 1, name: "Kim")))
        server.stub(.get, "/v1/users/2", .status(404))
        let lines = Recorder<String>()
        let provider = server.makeProvider(interceptor: RetryPolicy(random: { 0 }), monitors: [keepingLogger(lines)])
        // WHEN both are made
        _ = try await provider.response(TestEndpoint())
        await #expect(throws: NetworkError.invalidStatusCode(404)) { _ = try await provider.response(TestEndpoint(path: "/users/2")) }
        await provider.waitForMonitors()
        // THEN each has its summary only: the summary of a NetworkError already says what the attempt said
        #expect(lines.count == 2)
        #expect(lines.all.first?.hasPrefix("GET https://api.example.com/v1/users/1 → 200 in ") == true)
        #expect(lines.all.last?.hasSuffix(" ms, 1 attempt: The server answered with unacceptable status code 404.") == true)
    }

    @Test func aSingleAttemptWhose401StartedARefreshThatFailedLogsItsAttemptBeforeTheRefreshsLine() async throws {
        // GIVEN an expired access token, a server that rejects the refresh token, and a basic logger
        let api = MockAuthServer()
        api.setRefreshAnswer(.reject)
        let lines = Recorder<String>()
        let (provider, _) = api.makeAuthenticatedProvider(monitors: [keepingLogger(lines)])
        // WHEN the call gets 401 and its refresh fails: one attempt, ending the call
        await #expect(throws: NetworkError.self) { _ = try await provider.response(api.resource("/me")) }
        await provider.waitForMonitors()
        // THEN its attempt's line is written as the refresh starts, before the refresh call's line and the summary
        let log = lines.all
        let attempt = try #require(log.firstIndex { $0.hasPrefix("attempt 1: GET https://api.example.com/v1/me → 401 in ") })
        let refresh = try #require(log.firstIndex { $0.hasPrefix("POST https://api.example.com/v1/auth/refresh → failed in ") })
        let summary = try #require(log.firstIndex { $0.hasPrefix("GET https://api.example.com/v1/me → failed in ") })
        #expect(attempt < refresh && refresh < summary)
        #expect(log[summary].contains(" ms, 1 attempt: "))
        #expect(log.count == 3)
        expectHidden(["access-0", "refresh-0"], in: log.joined(separator: "\n"), "log")
    }

    @Test func aTransportFailureAfterARedirectNamesTheURLItFailedAt() async throws {
        // GIVEN a URL redirected to another, whose connection times out once
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(302, headers: ["Location": "https://api.example.com/v1/elsewhere?token=t-9"]))
        server.stub(.get, "/v1/elsewhere", .failure(URLError(.timedOut)), .json(User(id: 1, name: "Kim")))
        let lines = Recorder<String>()
        let provider = server.makeProvider(
            interceptor: RetryPolicy(random: { 0 }), monitors: [keepingLogger(lines)], sleep: RecordedDelays().sleep)
        // WHEN the call is retried and succeeds
        _ = try await provider.response(TestEndpoint())
        await provider.waitForMonitors()
        // THEN the failed attempt's line names the hop's URL (redacted), where the connection failed
        let attempt = try #require(lines.all.first { $0.hasPrefix("attempt 1: ") })
        #expect(attempt.hasPrefix("attempt 1: GET https://api.example.com/v1/elsewhere?token=%3Credacted%3E → failed in "))
        expectHidden(["t-9"], in: lines.all.joined(separator: "\n"), "log")
    }

    @Test func aRefusedRedirectShowsItsStatus() async throws {
        // GIVEN a PUT with a body redirected to another origin (refused: the body never goes there)
        let server = MockServer()
        server.stub(.put, "/v1/users/1", .status(307, headers: ["Location": "https://collector.example.org/x"]))
        let lines = Recorder<String>()
        let provider = server.makeProvider(monitors: [keepingLogger(lines, verbosity: .verbose)])
        // WHEN it is sent
        await #expect(throws: NetworkError.redirectWouldForwardBody(statusCode: 307)) {
            _ = try await provider.response(TestEndpoint(method: .put, body: .json(["name": "Kim"])))
        }
        await provider.waitForMonitors()
        // THEN its attempt's line says the 307 that came, not `failed`
        #expect(lines.all.first?.hasPrefix("attempt 1: PUT https://api.example.com/v1/users/1 → 307 in ") == true)
    }

    @Test func theAppsOwnErrorShowsItsTypeCaseAndCodeNeverItsPayloadOrDescriptions() async throws {
        // GIVEN an error mapper that turns a 423 into the app's error, whose message holds a secret
        let secret = "msg-secret-\(UUID().uuidString)"
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(423))
        let lines = Recorder<String>()
        let provider = server.makeProvider(
            errorMapper: { _ in AccountError.locked(message: "locked for kim@example.com, token \(secret)") },
            monitors: [keepingLogger(lines)])
        // WHEN the call fails with it
        await #expect(throws: AccountError.locked(message: "")) { _ = try await provider.response(TestEndpoint()) }
        await provider.waitForMonitors()
        // THEN the attempt's line names the type, the case and the code, before the summary (which names the type only)
        let log = lines.all
        #expect(log.count == 2)
        #expect(log.first?.hasPrefix("attempt 1: GET https://api.example.com/v1/users/1 → 423 in ") == true)
        #expect(log.first?.hasSuffix(" ms: AccountError.locked (code 4023)") == true)
        #expect(log.last?.hasSuffix(" ms, 1 attempt: AccountError") == true)
        expectHidden([secret, "kim@example.com"], in: log.joined(separator: "\n"), "log")
    }

    @Test func noSecretReachesAnyVerboseAttemptLine() async throws {
        // GIVEN an expired token, a presigned-style query, a secret in the request body and in the 401's body
        let api = MockAuthServer()
        let answerSecret = "answer-\(UUID().uuidString)"
        api.mock.stub(.post, "/v1/me/keys") { request in
            request.header("Authorization") == "Bearer access-1"
                ? .json(raw: #"{"secret":"\#(answerSecret)","name":"visible-name"}"#)
                : .json(raw: #"{"error":"expired","token":"access-0"}"#, statusCode: 401)
        }
        let lines = Recorder<String>()
        let (provider, _) = api.makeAuthenticatedProvider(monitors: [keepingLogger(lines, verbosity: .verbose)])
        struct Keys: Endpoint {
            let baseURL: URL
            var path: String { "/me/keys" }
            var method: HTTPMethod { .post }
            var queryItems: [URLQueryItem] { [URLQueryItem(name: "X-Amz-Signature", value: "sig-value")] }
            var body: RequestBody { .json(["password": "pw", "label": "visible-label"]) }
        }
        // WHEN the call gets 401, refreshes, and is sent again
        _ = try await provider.response(Keys(baseURL: api.baseURL))
        await provider.waitForMonitors()
        // THEN the failed attempt shows its request and response, redacted
        let log = lines.all.joined(separator: "\n")
        #expect(log.contains("attempt 1: POST https://api.example.com/v1/me/keys?X-Amz-Signature=%3Credacted%3E → 401 in "))
        #expect(log.contains("visible-label") && log.contains(#""error":"expired""#) && log.contains("visible-name"))
        expectHidden(["access-0", "access-1", "refresh-0", "refresh-1", "sig-value", #""pw""#, answerSecret], in: log, "log")
    }
}

/// An error that says nothing about itself.
private enum PlainError: Error {
    case offline
    case rejected(reason: String)
}

/// An enum error whose mirror names a child of its choosing, as if it were a case with a payload.
private enum CustomMirroredError: Error, CustomReflectable {
    case leaked
    var customMirror: Mirror { Mirror(self, children: ["<secret>": 1], displayStyle: .enum) }
}

/// An enum error that writes itself to a stream.
private enum StreamedError: Error, TextOutputStreamable {
    case expired
    func write(to target: inout some TextOutputStream) { target.write("expired <secret>") }
}

/// An enum error that describes itself for debugging only.
private enum DebugDescribedError: Error, CustomDebugStringConvertible {
    case expired
    var debugDescription: String { "expired <secret>" }
}

/// An error whose type chose its mirror.
private struct MirroredError: Error, CustomReflectable {
    let token: String
    var customMirror: Mirror { Mirror(self, children: ["shown": token]) }
}

@Suite("Logging: what an error shows")
struct RedactedErrorTests {
    @Test func anErrorShowsWhatItIsAndItsCodeNeverItsPayload() {
        let redactor = Redactor()
        #expect(redactor.error(NetworkError.invalidStatusCode(401)) == "The server answered with unacceptable status code 401.")
        let offline = URLError(.notConnectedToInternet, userInfo: [NSURLErrorFailingURLErrorKey: URL(string: "https://x/?token=t-1") as Any])
        #expect(redactor.error(offline) == "URLError -1009")
        #expect(redactor.error(NSError(domain: "AppDomain", code: 7, userInfo: [NSLocalizedDescriptionKey: "t-2"])) == "AppDomain 7")
        #expect(redactor.error(PlainError.offline) == "PlainError.offline")
        #expect(redactor.error(PlainError.rejected(reason: "t-3")) == "PlainError.rejected")
        #expect(redactor.error(AccountError.locked(message: "t-4")) == "AccountError.locked (code 4023)")
        #expect(redactor.error(AccountError.closed) == "AccountError (code 4010)")   // it prints itself: its name is not asked
        #expect(redactor.error(MirroredError(token: "t-5")) == "MirroredError")
        #expect(redactor.error(CancellationError()) == "CancellationError")
    }

    @Test func anErrorThatChoseHowItIsShownShowsOnlyItsType() {
        // A mirror of its own, styled as an enum's: its child's label is no case name
        #expect(Redactor().error(CustomMirroredError.leaked) == "CustomMirroredError")
        // A case without a payload whose type prints itself (as a stream, or for debugging): its text is not asked
        #expect(Redactor().error(StreamedError.expired) == "StreamedError")
        #expect(Redactor().error(DebugDescribedError.expired) == "DebugDescribedError")
    }
}
