// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in Docs/Retries.md and Docs/Observability.md: keep each identical to its page.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

// MARK: Docs/Retries.md

func makeProvider(auth: AuthInterceptor) -> NetworkProvider {
    NetworkProvider(interceptor: Interceptor(adapters: [auth], retriers: [auth, RetryPolicy()]))
}

// MARK: Docs/Observability.md

final class StatusCounter: EventMonitor, @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [Int: Int] = [:]

    func responseDidArrive(_ response: Response, duration: TimeInterval, context: RequestContext) {
        lock.lock(); counts[response.statusCode, default: 0] += 1; lock.unlock()
    }

    func count(of status: Int) -> Int {
        lock.lock(); defer { lock.unlock() }
        return counts[status] ?? 0
    }
}

enum ProfileError: Error, CustomNSError {
    case locked(message: String)   // the message is not logged
    case closed

    var errorCode: Int {
        switch self {
        case .locked: return 4023
        case .closed: return 4010
        }
    }
}

func describe(_ response: Response) -> (safe: String, full: String) {
    (response.request.cURLDescription, response.request.cURLDescription(redactor: nil))
}

func report(_ response: Response) -> String {
    var text = ""
    dump(response, to: &text)   // status, URL, header names, sizes: no secret
    return text
}

func statusesSeen(by counter: StatusCounter, through provider: NetworkProvider, calling endpoint: some Endpoint) async throws -> Int {
    _ = try await provider.response(endpoint)
    await provider.waitForMonitors()          // every event of that call has been delivered
    return counter.count(of: 200)
}

func describeAttempts(of endpoint: some Endpoint, through provider: NetworkProvider) async throws -> String {
    let response = try await provider.response(endpoint)
    let statuses = response.report.statusCodes.map { $0.map(String.init) ?? "no response" }
    return "\(response.report.attempts) attempt(s): \(statuses.joined(separator: ", ")) in \(response.report.duration) s"
}

@Suite("Retries and observability doc snippets")
struct ObservabilityDocSnippetTests {
    @Test func waitingForMonitorsReplacesPolling() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(["id": 1]))
        let counter = StatusCounter()
        let provider = server.makeProvider(monitors: [counter])
        #expect(try await statusesSeen(by: counter, through: provider, calling: TestEndpoint()) == 1)
    }

    @Test func theReportDescribesEveryAttempt() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(503), .json(["id": 1]))
        let provider = server.makeProvider(interceptor: RetryPolicy(), sleep: RecordedDelays().sleep)
        let text = try await describeAttempts(of: TestEndpoint(), through: provider)
        #expect(text.hasPrefix("2 attempt(s): 503, 200 in "))
    }

    @Test func anAppErrorShowsItsCaseAndCodeInTheLog() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/me", .status(423))
        let lines = Recorder<String>()
        let provider = server.makeProvider(
            errorMapper: { _ in ProfileError.locked(message: "kim@example.com is locked") },
            monitors: [NetworkLogger(sink: LogSink { lines.append($0) })])
        await #expect(throws: ProfileError.self) { _ = try await provider.response(TestEndpoint(path: "/me")) }
        await provider.waitForMonitors()
        #expect(Redactor().error(ProfileError.locked(message: "x")) == "ProfileError.locked (code 4023)")
        #expect(lines.all.first?.hasSuffix(": ProfileError.locked (code 4023)") == true)
        #expect(lines.all.last?.hasSuffix(" ms, 1 attempt: ProfileError") == true)
        #expect(!lines.all.joined().contains("kim@example.com"))
    }

    @Test func patientPolicy() {
        let patient = RetryPolicy(
            retryLimit: 4,
            exponentialBackoffScale: 1,
            maximumDelay: 60,
            retryableMethods: RetryPolicy.defaultRetryableMethods.union([.post])   // only if your POSTs are idempotent
        )
        #expect(patient.retryLimit == 4 && patient.retryableMethods.contains(.post))
    }

    @Test func testingWithoutWaiting() async throws {
        let delays = RecordedDelays()   // from NetworkingTestSupport
        let server = MockServer()
        server.stub(.get, "/v1/feed", .status(503), .status(503), .status(200))
        let provider = server.makeProvider(interceptor: RetryPolicy(random: { 0 }), sleep: delays.sleep)
        // after a call: delays.all == [0.5, 1.0]
        _ = try await provider.response(TestEndpoint(path: "/feed"))
        #expect(delays.all == [0.5, 1.0])
    }

    @Test func monitorsAndLogging() async throws {
        let counter = StatusCounter()
        let monitored = NetworkProvider(monitors: [NetworkLogger(), counter])
        #expect(monitored.interceptor == nil)

        var redactor = Redactor()
        redactor.headerNames.insert("X-Session")
        redactor.bodyKeys.insert("pin")
        let logger = NetworkLogger(verbosity: .verbose, redactor: redactor, sink: .standardOutput)
        let collected = LogSink { line in
            // hand the line to your own logging system
            _ = line
        }
        #expect(logger.verbosity == .verbose && logger.redactor.hidesHeader("x-session"))
        _ = collected

        let server = MockServer()
        let done = Signal()
        struct Finished: EventMonitor {
            let done: Signal
            func requestDidFinish(_ request: URLRequest, result: Result<Response, any Error>, attempts: Int, duration: TimeInterval, context: RequestContext) { done.fire() }
        }
        server.stub(.get, "/v1/users/1", .status(503), .status(200))
        let provider = server.makeProvider(interceptor: RetryPolicy(random: { 0 }), monitors: [counter, Finished(done: done)], sleep: RecordedDelays().sleep)
        let response = try await provider.response(TestEndpoint(headers: ["Authorization": "Bearer t0k3n"]))
        await done.wait()
        #expect(counter.count(of: 503) == 1 && counter.count(of: 200) == 1)
        let (safe, full) = describe(response)
        let described = !safe.contains("t0k3n") && full.contains("t0k3n")
        #expect(described)
        let reported = report(response)
        let dumpedSafely = !reported.contains("t0k3n") && reported.contains("Authorization: <redacted>") && reported.contains("statusCode: 200")
        #expect(dumpedSafely)
    }
}
