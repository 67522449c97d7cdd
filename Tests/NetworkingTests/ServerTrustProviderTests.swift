import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Records the pin mismatches monitors are told about.
struct MismatchRecorder: EventMonitor {
    let mismatches = Recorder<PinMismatch>()
    func pinValidationDidFail(_ mismatch: PinMismatch, context: RequestContext) { mismatches.append(mismatch) }
}

/// Pins through the provider: calls that must not go out unpinned fail before anything is sent (every hop
/// checked), and a refusal the session delegate records becomes the call's error.
@Suite("Server trust: the provider fails closed and reports", SuiteTimeLimit.oneMinute)
struct ServerTrustProviderTests {
    /// A server answering every request with `{}`.
    static func server() -> MockServer {
        let server = MockServer()
        server.stub { _ in .json(raw: "{}") }
        return server
    }

    /// A provider sending to `server`, with `trust`.
    static func provider(_ server: MockServer, trust: ServerTrust, monitors: [any EventMonitor] = [], retrier: FixedRetrier? = nil) -> NetworkProvider {
        let router = ServerRouter(server: server)
        let interceptor: any RequestInterceptor = retrier.map { Interceptor(interceptors: [router, $0]) } ?? router
        return NetworkProvider(configuration: server.makeConfiguration(), interceptor: interceptor, serverTrust: trust, monitors: monitors)
    }

    /// Pins for `host`, on a platform that cannot enforce them (as Linux), whatever this one is.
    static func unenforceable(
        _ host: String = "api.example.com", includingSubdomains: Bool = false, expires: Date? = nil, reportOnly: Bool = false,
        allowsUnenforcedPinning: Bool = false
    ) throws -> ServerTrust {
        var trust = try ServerTrust(
            pinning: [.host(host, includingSubdomains: includingSubdomains, pins: [pinA, pinB], expires: expires, reportOnly: reportOnly)],
            allowsUnenforcedPinning: allowsUnenforcedPinning)
        trust.enforcesPins = false
        return trust
    }

    @Test func thisPlatformSaysWhetherItEnforcesPins() async throws {
        // GIVEN pins as an app declares them (nothing simulated) and a server
        let server = Self.server()
        let trust = try ServerTrust(pinning: [.host("api.example.com", pins: [pinA, pinB])])
        #if canImport(FoundationNetworking)
            // WHEN a call goes to the pinned host on Linux
            // THEN it fails closed before it is sent: libcurl would check TLS without the pins
            #expect(!ServerTrust.canEnforcePins && !trust.enforcesPins)
            await #expect(throws: NetworkError.unenforceablePins(host: "api.example.com")) {
                try await Self.provider(server, trust: trust).response(TestEndpoint())
            }
            #expect(server.requests.isEmpty)
        #else
            // (On Apple platforms pins are enforced by the session delegate; the mock has no TLS to check.)
            #expect(ServerTrust.canEnforcePins && trust.enforcesPins)
        #endif
    }

    @Test func aCallToAPinnedHostFailsBeforeAnythingIsSent() async throws {
        // GIVEN pins that cannot be enforced, for a host and its subdomains
        let server = Self.server()
        let monitor = RecordingMonitor()
        let provider = Self.provider(server, trust: try Self.unenforceable("example.com", includingSubdomains: true), monitors: [monitor])
        // WHEN calls go to the domain and a subdomain, however the host is spelled
        for base in ["https://example.com/", "https://API.Example.com./v1/"] {
            // THEN each fails with a typed error naming the host, and the server received nothing
            await #expect(throws: NetworkError.unenforceablePins(host: base.contains("API") ? "api.example.com" : "example.com")) {
                try await provider.response(TestEndpoint(baseURL: try #require(URL(string: base))))
            }
        }
        #expect(server.requests.isEmpty)
        // AND the monitors saw each call fail after its one attempt, with that error
        await provider.waitForMonitors()
        let finished = monitor.log.all.filter { $0.hasPrefix("finished") }
        #expect(finished.count == 2 && finished.allSatisfy { $0.contains("was not sent") && $0.hasSuffix("after 1") })
    }

    @Test func aRedirectToAPinnedHostIsRefusedBeforeThatHop() async throws {
        // GIVEN an unpinned API that redirects to a pinned host
        let server = MockServer()
        server.stub { request in
            request.url.host == "api.example.com" ? .status(302, headers: ["Location": "https://secure.example.com/landing"]) : .json(raw: "{}")
        }
        let provider = Self.provider(server, trust: try Self.unenforceable("secure.example.com"))
        // WHEN the call follows the redirect
        // THEN it fails naming the pinned host, and that host received nothing
        await #expect(throws: NetworkError.unenforceablePins(host: "secure.example.com")) {
            try await provider.response(TestEndpoint())
        }
        #expect(server.requests.map(\.url.host) == ["api.example.com"])
    }

    @Test func otherHostsAreNotAffected() async throws {
        // GIVEN pins for one host only
        let server = Self.server()
        let provider = Self.provider(server, trust: try Self.unenforceable("secure.example.com"))
        // WHEN calls go to other hosts, including one whose name ends like the pinned one
        for base in ["https://api.example.com/", "https://notsecure.example.com/", "https://example.com/"] {
            _ = try await provider.response(TestEndpoint(baseURL: try #require(URL(string: base))))
        }
        // THEN they are sent as usual
        #expect(server.requests.count == 3)
    }

    @Test func theAppCanOptInToUnenforcedPins() async throws {
        // GIVEN pins that cannot be enforced, and an app that said that is acceptable
        let server = Self.server()
        let provider = Self.provider(server, trust: try Self.unenforceable(allowsUnenforcedPinning: true))
        // WHEN a call goes to the pinned host THEN it is sent (unpinned, as the app chose)
        #expect(try await provider.response(TestEndpoint()).statusCode == 200)
        #expect(server.requests.count == 1)
    }

    @Test func reportOnlyAndExpiredPinsNeverStopACall() async throws {
        // GIVEN report-only pins, and pins that have expired, neither of which can be enforced here
        let server = Self.server()
        let reportOnly = Self.provider(server, trust: try Self.unenforceable(reportOnly: true))
        let expired = Self.provider(server, trust: try Self.unenforceable(expires: Date(timeIntervalSinceNow: -1)))
        // WHEN calls go to the host THEN both are sent
        _ = try await reportOnly.response(TestEndpoint())
        _ = try await expired.response(TestEndpoint())
        #expect(server.requests.count == 2)
        // AND pins expiring later still stop it
        let later = Self.provider(server, trust: try Self.unenforceable(expires: Date(timeIntervalSinceNow: 3_600)))
        await #expect(throws: NetworkError.unenforceablePins(host: "api.example.com")) { try await later.response(TestEndpoint()) }
        #expect(server.requests.count == 2)
    }

    @Test func plainHTTPToAPinnedHostIsRefusedEverywhere() async throws {
        // GIVEN pins that this platform enforces (as Apple's), or that the app let go unenforced
        let server = Self.server()
        var enforced = try Self.unenforceable()
        enforced.enforcesPins = true
        for trust in [enforced, try Self.unenforceable(allowsUnenforcedPinning: true)] {
            // WHEN a call goes to the pinned host over http, where there is no certificate to check
            // THEN it fails before it is sent
            await #expect(throws: NetworkError.unenforceablePins(host: "api.example.com")) {
                try await Self.provider(server, trust: trust).response(TestEndpoint(baseURL: try #require(URL(string: "http://api.example.com/"))))
            }
        }
        #expect(server.requests.isEmpty)
    }

    @Test func aRefusalIsNeverRetried() async throws {
        // GIVEN a retrier that would retry anything
        let server = Self.server()
        let log = Recorder<String>()
        let provider = Self.provider(server, trust: try Self.unenforceable(), retrier: FixedRetrier(result: .retry, log: log))
        // WHEN the call is refused THEN it fails once, with its own error; the retrier was not asked
        await #expect(throws: NetworkError.unenforceablePins(host: "api.example.com")) { try await provider.response(TestEndpoint()) }
        #expect(log.count == 0)
        #expect(server.requests.isEmpty)
    }

    @Test func aHostThatCannotBeComparedIsRefusedWhilePinsAreEnforced() async throws {
        // GIVEN pins for one host, and a URL whose host is percent-encoded (URL.host gives it decoded, not ASCII)
        let server = Self.server()
        let url = try #require(URL(string: "https://b%C3%BCcher.example/"))
        // WHEN a call goes there THEN it is refused: it cannot be told apart from a pinned host
        do {
            _ = try await Self.provider(server, trust: try Self.unenforceable()).response(TestEndpoint(baseURL: url))
            Issue.record("the call was sent")
        } catch NetworkError.unenforceablePins {
        }
        // AND with report-only pins alone, it goes out
        _ = try await Self.provider(server, trust: try Self.unenforceable(reportOnly: true)).response(TestEndpoint(baseURL: url))
        #expect(server.requests.count == 1)
    }

    // MARK: The session delegate's answer (what the Apple glue does with a verdict)

    /// A delegate with `monitors`, a task registered for a call, and the outcome its completion gives.
    final class ChallengedTask: @unchecked Sendable {
        let delegate = SessionDelegate(serverTrust: .default)
        let session = URLSession(configuration: .ephemeral)
        let task: URLSessionTask
        let context: RequestContext
        let outcome = Recorder<Result<Int, NetworkError>>()

        init(monitors: [any EventMonitor]) throws {
            let request = URLRequest(url: try #require(URL(string: "https://api.example.com/v1/users/1")))
            task = session.dataTask(with: request)   // never resumed: only its identifier and state are used
            context = RequestContext(endpoint: TestEndpoint(), events: EventDispatcher(monitors), provider: nil, refreshing: nil)
            let (handle, outcome) = (TaskHandle(), outcome)
            let deadline = try Deadline(seconds: 60)
            let transfer = DelegateTransfer(
                delivery: .buffer, acceptable: Set(200..<300), followsRedirects: true, deliveryLimit: 1_024, gatherLimit: 1_024,
                request: request, progress: nil, uploadSize: 0, handle: handle, onStream: nil,
                onComplete: { data, response, error, state, _ in
                    switch NetworkProvider.outcome(data: data, response: response, error: error, state: state, handle: handle, deadline: deadline) {
                    case .success(let (_, http)): outcome.append(.success(http.statusCode))
                    case .failure(let failure):
                        // As the attempt loop sees it: a refusal ends the call with its own error; anything else is normalized.
                        let error = ServerTrustRefusal.endingTheCall(failure) ?? NetworkProvider.normalize(failure) as? NetworkError
                        outcome.append(.failure(error ?? .invalidURL("?")))
                    }
                })
            delegate.register(transfer, for: task, context: context)
        }

        deinit {
            session.invalidateAndCancel()
        }

        /// The task completes as URLSession completes a task whose challenge was cancelled.
        func completeCancelled() {
            delegate.urlSession(session, task: task, didCompleteWithError: URLError(.cancelled))
        }
    }

    @Test func aMismatchRefusedByTheDelegateIsTheCallsErrorAndIsReported() async throws {
        // GIVEN a call whose server presented a trusted chain without the pins, a monitor, and the logger
        let (recorder, lines) = (MismatchRecorder(), Recorder<String>())
        let call = try ChallengedTask(monitors: [recorder, NetworkLogger(sink: LogSink { lines.append($0) })])
        let mismatch = PinMismatch(host: "api.example.com", presentedPins: [pinB], expectedPins: [pinA], isReportOnly: false)
        // WHEN the delegate answers the verdict, and the task then completes cancelled
        let disposition = call.delegate.answer(.reject(.pinMismatch(host: "api.example.com"), mismatch: mismatch), for: call.task)
        call.completeCancelled()
        // THEN the challenge was cancelled, and the call fails with the pin error, not a bare cancellation
        #expect(disposition == .cancelAuthenticationChallenge)
        #expect(call.outcome.all == [.failure(.pinMismatch(host: "api.example.com"))])
        // AND the monitors heard of it, with pins only
        await call.context.events.drain()
        #expect(recorder.mismatches.all == [mismatch])
        #expect(lines.all == ["⚠︎ pins: api.example.com presented keys [\(pinB)], none of its pins [\(pinA)]: the call was stopped"])
    }

    @Test func anUntrustedChainRefusedByTheDelegateFailsAsUntrusted() async throws {
        // GIVEN a call whose chain the system did not trust
        let recorder = MismatchRecorder()
        let call = try ChallengedTask(monitors: [recorder])
        // WHEN the delegate refuses it and the task completes
        let disposition = call.delegate.answer(.reject(.transportFailed(URLError(.serverCertificateUntrusted)), mismatch: nil), for: call.task)
        call.completeCancelled()
        // THEN the call fails as URLSession would have said it, and there is no pin mismatch to report
        #expect(disposition == .cancelAuthenticationChallenge)
        #expect(call.outcome.all == [.failure(.transportFailed(URLError(.serverCertificateUntrusted)))])
        await call.context.events.drain()
        #expect(recorder.mismatches.all.isEmpty)
    }

    @Test func reportOnlyIsAcceptedAndReported() async throws {
        // GIVEN a report-only mismatch
        let recorder = MismatchRecorder()
        let call = try ChallengedTask(monitors: [recorder])
        let mismatch = PinMismatch(host: "api.example.com", presentedPins: [pinB], expectedPins: [pinA], isReportOnly: true)
        // WHEN the delegate answers it
        let disposition = call.delegate.answer(.acceptReporting(mismatch), for: call.task)
        // THEN the server's credential is used (the call goes on), nothing is recorded against the task,
        // and the monitors heard of it
        #expect(disposition == .useCredential)
        #expect(call.delegate.finish(call.task)?.serverTrustFailure == nil)
        await call.context.events.drain()
        #expect(recorder.mismatches.all == [mismatch])
    }

    @Test func acceptedAndUnpinnedChallengesChangeNothing() async throws {
        // GIVEN a matching chain, and a host without pins
        let recorder = MismatchRecorder()
        let call = try ChallengedTask(monitors: [recorder])
        // WHEN the delegate answers them THEN it uses the credential, or leaves the system to decide; no report
        #expect(call.delegate.answer(.accept, for: call.task) == .useCredential)
        #expect(call.delegate.answer(.performDefaultHandling, for: call.task) == .performDefaultHandling)
        call.completeCancelled()   // and a task cancelled for another reason stays a cancellation
        #expect(call.outcome.all == [.failure(.cancelled)])
        await call.context.events.drain()
        #expect(recorder.mismatches.all.isEmpty)
    }

    @Test func theErrorsSayWhatHappenedAndToWhichHost() {
        // GIVEN the two errors WHEN they are shown THEN they name the host, and differ by host
        #expect(NetworkError.pinMismatch(host: "api.example.com").description.contains("api.example.com"))
        #expect(NetworkError.unenforceablePins(host: "api.example.com").description.contains("was not sent"))
        #expect(NetworkError.pinMismatch(host: "a.example") != NetworkError.pinMismatch(host: "b.example"))
        #expect(NetworkError.pinMismatch(host: "a.example") != NetworkError.unenforceablePins(host: "a.example"))
    }
}
