import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A server's chain refused for a pinned host ends the call at once with its own error: another handshake
/// would present the same chain (or the same interceptor), so no retrier is asked, not even one that retries
/// every transport error — as with cancellation.
@Suite("Server trust: a refused chain is never retried", SuiteTimeLimit.oneMinute)
struct ServerTrustRetryTests {
    /// Pins on api.example.com that the chain does not have, enforced (as the session delegate enforces them on
    /// Apple platforms), whatever this platform is.
    static func enforcedTrust() throws -> ServerTrust {
        var trust = try ServerTrust(pinning: [.host("api.example.com", pins: [pinA, pinB])])
        trust.enforcesPins = true
        return trust
    }

    /// A retry policy that retries every transport error, the untrusted certificate included, without waiting.
    static let retryEverything = RetryPolicy(
        retryLimit: 5, exponentialBackoffScale: 0,
        retryableURLErrorCodes: RetryPolicy.defaultRetryableURLErrorCodes.union([.serverCertificateUntrusted, .secureConnectionFailed]))

    @Test(
        "a chain the delegate refuses ends the call after one handshake, with the refusal's error",
        arguments: [false, true])
    func aRefusedChainIsNotRetried(trusted: Bool) async throws {
        // GIVEN a pinned host whose server presents a chain the system does not trust (or a trusted one without the
        // pins), a provider whose RetryPolicy retries every transport error, an app retrier that would retry
        // anything, and a monitor
        let chain = try SecurityFixtures.chain("leaf-a-rsa2048")
        let handshakes = RefusedChainProtocol.Handshakes(evaluation: (trusted, trusted ? chain : []))
        let (log, monitor) = (Recorder<String>(), RecordingMonitor())
        let interceptor = Interceptor(interceptors: [
            RefusedChainProtocol.Router(handshakes: handshakes), Self.retryEverything, FixedRetrier(result: .retry, log: log),
        ])
        let provider = NetworkProvider(
            configuration: RefusedChainProtocol.configuration(), interceptor: interceptor, maximumAttempts: 5,
            serverTrust: try Self.enforcedTrust(), monitors: [monitor], sleep: { _ in })
        handshakes.delegate = try RefusedChainProtocol.sessionDelegate(of: provider)
        // WHEN a call goes to it
        let expected: NetworkError = trusted ? .pinMismatch(host: "api.example.com") : .transportFailed(URLError(.serverCertificateUntrusted))
        do {
            _ = try await provider.response(TestEndpoint())
            Issue.record("the call succeeded")
        } catch let error as NetworkError {
            // THEN it fails with the refusal's own error, not tooManyAttempts
            #expect(error == expected)
        }
        // AND there was exactly one handshake, no retrier was asked, and the monitors saw one attempt
        #expect(handshakes.count == 1)
        #expect(log.count == 0)
        await provider.waitForMonitors()
        #expect(monitor.log.all.filter { $0.hasPrefix("finished") }.map { $0.hasSuffix("after 1") } == [true])
    }

    @Test func aCallThatFailsClosedIsNotRetriedEither() async throws {
        // GIVEN pins that cannot be enforced here (Linux), and the same retriers
        let server = MockServer()
        server.stub { _ in .json(raw: "{}") }
        var trust = try ServerTrust(pinning: [.host("api.example.com", pins: [pinA, pinB])])
        trust.enforcesPins = false
        let log = Recorder<String>()
        let interceptor = Interceptor(interceptors: [ServerRouter(server: server), Self.retryEverything, FixedRetrier(result: .retry, log: log)])
        let provider = NetworkProvider(
            configuration: server.makeConfiguration(), interceptor: interceptor, maximumAttempts: 5, serverTrust: trust, sleep: { _ in })
        // WHEN a call goes to the pinned host THEN it fails closed once, with its own error; no retrier was asked
        await #expect(throws: NetworkError.unenforceablePins(host: "api.example.com")) { try await provider.response(TestEndpoint()) }
        #expect(log.count == 0)
        #expect(server.requests.isEmpty)
    }

    /// A guard, not the proof of a fix: this already held before the provider's never-retry list named a refresh
    /// that failed on pins (the AuthInterceptor ends the chain's retry with the refresh's error first). It fails if
    /// a refresh refused by the auth server's chain is ever repeated.
    @Test func aRefreshThatMetARefusedChainEndsTheCall() async throws {
        // GIVEN an API that says the token expired, a refresh that fails because the auth server's chain lacks its
        // pins, and an app retrier that would retry anything
        let server = MockServer()
        server.stub { _ in .status(401) }
        let refreshes = Recorder<Int>()
        let auth = AuthInterceptor(baseURL: URL(string: "https://api.example.com")!, store: InMemoryCredentialStore(MockAuthServer.initialCredential)) { _, _ in
            refreshes.append(1)
            throw NetworkError.pinMismatch(host: "auth.example.com")
        }
        let log = Recorder<String>()
        let interceptor = Interceptor(interceptors: [ServerRouter(server: server), auth, FixedRetrier(result: .retry, log: log)])
        let provider = NetworkProvider(configuration: server.makeConfiguration(), interceptor: interceptor, maximumAttempts: 5, sleep: { _ in })
        // WHEN a call gets the 401
        await #expect(throws: NetworkError.self) { try await provider.response(TestEndpoint()) }
        // THEN the refusal ends the call: one refresh, one request, no refresh or handshake again
        #expect(refreshes.count == 1)
        #expect(server.requests.count == 1)
    }

    @Test func aURLWithoutAHostIsNotSentWhilePinsAreEnforced() throws {
        // GIVEN enforced pins, and a URL whose host URL cannot read (libcurl may still find one in it)
        let target = try #require(URL(string: "https:/api.example.com/v1/me"))
        try #require(target.host == nil)
        // WHEN it is checked THEN it fails closed, naming no secret of the URL
        #expect(throws: NetworkError.unenforceablePins(host: "(a URL without a host)")) {
            try Self.enforcedTrust().checkEnforceable(target)
        }
        #expect(throws: Never.self) { try ServerTrust.default.checkEnforceable(target) }
    }

    @Test func aCertificateErrorOfAHostWithoutPinsIsStillTheRetriersChoice() async throws {
        // GIVEN a host without pins whose transport fails with an untrusted certificate (URLSession's own
        // answer, not the pins'), and a retrier that retries it
        let server = MockServer()
        server.stub { _ in .failure(URLError(.serverCertificateUntrusted)) }
        let log = Recorder<String>()
        let provider = NetworkProvider(
            configuration: server.makeConfiguration(),
            interceptor: Interceptor(interceptors: [ServerRouter(server: server), FixedRetrier(result: .retry, log: log)]), maximumAttempts: 2,
            serverTrust: try ServerTrust(pinning: [.host("other.example.com", pins: [pinA, pinB])]), sleep: { _ in })
        // WHEN a call goes there THEN the retrier decides, as for any transport error: only refusals of pins end a call
        await #expect(throws: NetworkError.self) { try await provider.response(TestEndpoint()) }
        #expect(log.count == 1)
        #expect(server.requests.count == 2)
    }
}

/// A URL protocol that plays the TLS handshake of a pinned host, as the session delegate's Apple glue does:
/// the delegate's verdict on the chain (the `evaluation` of ``Handshakes``) is answered through the delegate,
/// and the task then completes as URLSession completes one whose challenge was cancelled. Linux never asks the
/// delegate about server trust, so this is how the refusal path runs here.
final class RefusedChainProtocol: URLProtocol {
    /// The header that names the ``Handshakes`` a request is for.
    static let header = "X-Refused-Chain"

    /// One test's handshakes: the delegate that judges them, the evaluation the "system" gives, and how many
    /// there were.
    final class Handshakes: @unchecked Sendable {
        // @unchecked: `delegate` and `hosts` are guarded by `lock`; `evaluation` and `id` never change.
        let id = UUID().uuidString
        let evaluation: (trusted: Bool, chain: [Data])
        private let lock = NSLock()
        private weak var judge: SessionDelegate?
        private var hosts: [String] = []

        init(evaluation: (trusted: Bool, chain: [Data])) {
            self.evaluation = evaluation
            RefusedChainProtocol.register(self)
        }

        deinit {
            RefusedChainProtocol.unregister(id)
        }

        /// The provider's session delegate.
        var delegate: SessionDelegate? {
            get { locked { judge } }
            set { locked { judge = newValue } }
        }

        /// How many handshakes there were.
        var count: Int { locked { hosts.count } }

        fileprivate func record(_ host: String) { locked { hosts.append(host) } }

        private func locked<Value>(_ body: () -> Value) -> Value {
            lock.lock()
            defer { lock.unlock() }
            return body()
        }
    }

    /// Names the test's ``Handshakes`` in every request.
    struct Router: RequestInterceptor {
        let handshakes: Handshakes
        func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest {
            var request = request
            request.setValue(handshakes.id, forHTTPHeaderField: RefusedChainProtocol.header)
            return request
        }
    }

    private struct Weak {
        weak var handshakes: Handshakes?
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var registry: [String: Weak] = [:]

    private static func register(_ handshakes: Handshakes) {
        lock.lock()
        defer { lock.unlock() }
        registry[handshakes.id] = Weak(handshakes: handshakes)
    }

    private static func unregister(_ id: String) {
        lock.lock()
        defer { lock.unlock() }
        registry[id] = nil
    }

    private static func handshakes(for request: URLRequest) -> Handshakes? {
        guard let id = request.value(forHTTPHeaderField: header) else { return nil }
        lock.lock()
        defer { lock.unlock() }
        return registry[id]?.handshakes
    }

    /// The session delegate of `provider`, which answers its server-trust challenges.
    static func sessionDelegate(of provider: NetworkProvider) throws -> SessionDelegate {
        try #require(provider.urlSession.delegate as? SessionDelegate)
    }

    /// A configuration whose requests this protocol answers.
    static func configuration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [RefusedChainProtocol.self]
        return configuration
    }

    override class func canInit(with request: URLRequest) -> Bool {
        request.value(forHTTPHeaderField: header) != nil
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        request
    }

    override func startLoading() {
        guard let handshakes = Self.handshakes(for: request), let delegate = handshakes.delegate, let task, let host = request.url?.host else {
            client?.urlProtocol(self, didFailWithError: URLError(.unsupportedURL))
            return
        }
        handshakes.record(host)
        let verdict = delegate.serverTrust.verdict(forHost: host, at: Date()) { handshakes.evaluation }
        if delegate.answer(verdict, for: task) == .cancelAuthenticationChallenge {
            client?.urlProtocol(self, didFailWithError: URLError(.cancelled))
        } else {
            client?.urlProtocol(self, didFailWithError: URLError(.badServerResponse))   // this protocol only refuses
        }
    }

    override func stopLoading() {}
}
