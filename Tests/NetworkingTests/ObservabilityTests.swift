import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Writes every event as a line, and fires `finished` when a call ends.
struct RecordingMonitor: EventMonitor {
    let log = Recorder<String>()
    let finished = Signal()

    func requestDidBuild(_ request: URLRequest, context: RequestContext) { log.append("built") }
    func requestDidAdapt(_ request: URLRequest, context: RequestContext) { log.append("adapted") }
    func taskDidStart(_ request: URLRequest, context: RequestContext) { log.append("started") }
    func responseDidArrive(_ response: Response, duration: TimeInterval, context: RequestContext) {
        log.append("response \(response.statusCode) \(response.data.count)B")
    }
    func validationDidFail(_ response: Response, error: any Error, context: RequestContext) { log.append("invalid \(response.statusCode)") }
    func attemptDidFail(
        _ request: URLRequest, response: Response?, error: any Error, attempt: Int, duration: TimeInterval, context: RequestContext
    ) {
        log.append("failed \(attempt)\(response.map { " \($0.statusCode)" } ?? "")")
    }
    func retryDidDecide(_ result: RetryResult, attempt: Int, error: any Error, context: RequestContext) {
        log.append("retry \(attempt): \(result)")
    }
    func tokenRefreshDidStart(context: RequestContext) { log.append("refresh started") }
    func tokenRefreshDidSucceed(context: RequestContext) { log.append("refresh succeeded") }
    func tokenRefreshDidFail(_ error: any Error, context: RequestContext) { log.append("refresh failed") }
    func requestDidFinish(_ request: URLRequest, result: Result<Response, any Error>, attempts: Int, duration: TimeInterval, context: RequestContext) {
        switch result {
        case .success(let response): log.append("finished \(response.statusCode) after \(attempts)")
        case .failure(let error): log.append("finished \(error) after \(attempts)")
        }
        finished.fire()
    }
}

@Suite("Event monitoring, logging and cURL", SuiteTimeLimit.oneMinute)
struct ObservabilityTests {
    @Test func eventsOfAnAdaptedFailedRetriedAndSucceededCallArriveInOrder() async throws {
        // GIVEN a server that is busy once, a retry policy, and a recording monitor
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(503), .json(User(id: 1, name: "Kim")))
        let monitor = RecordingMonitor()
        let provider = server.makeProvider(interceptor: RetryPolicy(random: { 0 }), monitors: [monitor], sleep: RecordedDelays().sleep)
        // WHEN the call is made
        _ = try await provider.request(TestEndpoint(), as: User.self)
        await monitor.finished.wait()
        // THEN the monitor saw each step once, in order
        #expect(
            monitor.log.all == [
                "built",
                "adapted", "started", "response 503 0B", "invalid 503", "failed 1 503", "retry 1: retryWithDelay(0.5)",
                "adapted", "started", "response 200 21B",
                "finished 200 after 2",
            ])
    }

    @Test func tokenRefreshIsReportedToTheCallThatStartedIt() async throws {
        let api = MockAuthServer()
        let monitor = RecordingMonitor()
        let (provider, _) = api.makeAuthenticatedProvider(monitors: [monitor])
        _ = try await provider.response(api.resource("/me"))
        // the refresh call itself also finishes: wait until the outer call has
        while !monitor.log.all.contains(where: { $0.hasPrefix("finished 200 after 2") }) {
            await monitor.finished.wait()
            await Task.yield()
        }
        let log = monitor.log.all
        let started = try #require(log.firstIndex(of: "refresh started"))
        let succeeded = try #require(log.firstIndex(of: "refresh succeeded"))
        #expect(started < succeeded)
        #expect(log.filter { $0.hasPrefix("refresh") } == ["refresh started", "refresh succeeded"])
        // AND the 401 attempt was told failed after its validation and before the refresh, the retry decided after it
        let invalid = try #require(log.firstIndex(of: "invalid 401"))
        let failed = try #require(log.firstIndex(of: "failed 1 401"))
        let retry = try #require(log.firstIndex { $0.hasPrefix("retry 1: ") })
        let finished = try #require(log.firstIndex(of: "finished 200 after 2"))
        #expect(invalid < failed && failed < started && succeeded < retry && retry < finished)
        #expect(log.filter { $0.hasPrefix("failed") } == ["failed 1 401"])
    }

    @Test func aSlowMonitorNeverStallsRequests() async throws {
        // GIVEN a monitor that blocks its queue until the test lets it go
        let release = DispatchSemaphore(value: 0)
        struct Blocking: EventMonitor {
            let release: DispatchSemaphore
            func requestDidBuild(_ request: URLRequest, context: RequestContext) { release.wait() }
        }
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(User(id: 1, name: "Kim")))
        let provider = server.makeProvider(monitors: [Blocking(release: release)])
        // WHEN calls are made while it is blocked
        for _ in 0..<3 { _ = try await provider.request(TestEndpoint(), as: User.self) }
        // THEN they all completed (else this test times out)
        #expect(server.requests.count == 3)
        for _ in 0..<3 { release.signal() }
    }

    @Test func basicLoggerWritesTheCallsLineAfterItsFailedAttemptsLine() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(503), .json(User(id: 1, name: "Kim")))
        let lines = Recorder<String>()
        let done = Signal()
        let logger = NetworkLogger(
            sink: LogSink {
                lines.append($0)
                if lines.count == 2 { done.fire() }
            })
        let provider = server.makeProvider(interceptor: RetryPolicy(random: { 0 }), monitors: [logger], sleep: RecordedDelays().sleep)
        _ = try await provider.request(TestEndpoint(queryItems: [URLQueryItem(name: "token", value: "q-secret")]), as: User.self)
        await done.wait()
        let line = try #require(lines.all.last)
        #expect(lines.count == 2)
        #expect(lines.all.first?.hasPrefix("attempt 1: GET https://api.example.com/v1/users/1?token=%3Credacted%3E → 503 in ") == true)
        #expect(!lines.all.joined().contains("q-secret"))
        #expect(line.hasPrefix("GET https://api.example.com/v1/users/1?token=%3Credacted%3E → 200 in "))
        #expect(line.hasSuffix(" ms, 2 attempts, 21 bytes"))
        #expect(!line.contains("q-secret"))
    }

    @Test func noSecretReachesTheVerboseLogOrCURL() async throws {
        // GIVEN a request and a response full of secrets
        let secrets = (1...9).map { "SECRET-\($0)-x" }
        let server = MockServer()
        server.stub(
            .post, "/v1/auth/sign-in",
            MockResponse(
                statusCode: 200,
                headers: ["Set-Cookie": "session=\(secrets[0])", "Content-Type": "application/json"],
                body: Data(#"{"accessToken":"\#(secrets[1])","user":{"refresh_token":"\#(secrets[2])","name":"Kim"}}"#.utf8)
            ))
        var redactor = Redactor()
        redactor.headerNames.insert("X-Api-Key")
        let lines = Recorder<String>()
        let done = Signal()
        let logger = NetworkLogger(
            verbosity: .verbose, redactor: redactor,
            sink: LogSink {
                lines.append($0)
                if lines.count == 3 { done.fire() }
            })
        let provider = server.makeProvider(monitors: [logger])
        struct SignIn: Encodable, Sendable {
            let email: String
            let password: String
            let device: [String: String]
        }
        let endpoint = TestEndpoint(
            path: "/auth/sign-in", method: .post,
            headers: ["Authorization": "Bearer \(secrets[3])", "Cookie": "id=\(secrets[4])", "X-Api-Key": secrets[5], "X-Trace": "visible-trace"],
            queryItems: [URLQueryItem(name: "access_token", value: secrets[6])],
            body: .json(SignIn(email: "kim@example.com", password: secrets[7], device: ["accessToken": secrets[8]]))
        )
        // WHEN it is logged verbosely and described as cURL
        let response = try await provider.response(endpoint)
        await done.wait()
        let log = lines.all.joined(separator: "\n")
        let curl = response.request.cURLDescription(redactor: redactor)
        // THEN no secret appears anywhere, while the harmless parts do
        for secret in secrets {
            #expect(!log.contains(secret), "log leaks \(secret)")
            #expect(!curl.contains(secret), "cURL leaks \(secret)")
        }
        #expect(log.contains("visible-trace") && log.contains("kim@example.com") && log.contains("\"name\":\"Kim\""))
        #expect(curl.contains("visible-trace") && curl.contains("kim@example.com"))
        // and the full description, asked for explicitly, has them (so the search above can fail)
        let full = response.request.cURLDescription(redactor: nil)
        #expect(secrets[3...7].allSatisfy { full.contains($0) || full.contains($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!) })
    }

    @Test func defaultCURLDescriptionIsRedacted() throws {
        var request = try TestEndpoint(headers: ["Authorization": "Bearer tok-123"]).urlRequest()
        request.setValue("a=b", forHTTPHeaderField: "Cookie")
        #expect(request.cURLDescription == "curl -X 'GET' -H 'Authorization: <redacted>' -H 'Cookie: <redacted>' 'https://api.example.com/v1/users/1'")
    }

    // `Process` exists only on macOS and Linux (not on iOS, tvOS, watchOS, visionOS or Mac Catalyst), and
    // the test runs `/bin/sh`: elsewhere it is left out.
    #if os(macOS) || os(Linux)
        @Test func cURLQuotingSurvivesHostileValues() throws {
            // GIVEN header values and a body written to break out of a shell command
            let hostile = ["'; touch /tmp/pwned #", "$(id)", "`id`", "a\"b\\c", "it's", "&& exit 1 ||", "'\\''"]
            var request = URLRequest(url: URL(string: "https://api.example.com/v1/x?q=a'b")!)
            request.httpMethod = "POST"
            for (index, value) in hostile.enumerated() { request.setValue(value, forHTTPHeaderField: "X-H\(index)") }
            request.httpBody = Data("'; rm -rf ~ ;\n echo '$(whoami)`".utf8)
            request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
            let command = request.cURLDescription(redactor: nil)
            // WHEN a real shell runs it with a `curl` that prints its arguments
            let shell = Process()
            shell.executableURL = URL(fileURLWithPath: "/bin/sh")
            shell.arguments = ["-c", #"curl() { for a in "$@"; do printf '%s\0' "$a"; done; }; "# + command]
            let output = Pipe()
            shell.standardOutput = output
            try shell.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            shell.waitUntilExit()
            // THEN every argument arrives exactly as given, and nothing else ran
            let arguments = String(decoding: data, as: UTF8.self).split(separator: "\0", omittingEmptySubsequences: false).dropLast().map(String.init)
            let headers = arguments.filter { $0.hasPrefix("X-H") }
            #expect(shell.terminationStatus == 0)
            #expect(arguments.prefix(2) == ["-X", "POST"])
            #expect(Set(headers) == Set(hostile.enumerated().map { "X-H\($0.offset): \($0.element)" }))
            #expect(arguments.contains("'; rm -rf ~ ;\n echo '$(whoami)`"))
            #expect(arguments.last == "https://api.example.com/v1/x?q=a'b")
            #expect(!FileManager.default.fileExists(atPath: "/tmp/pwned"))
        }
    #endif
}
