import Foundation
import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A set of stubbed responses and the requests received, private to the providers it makes.
///
/// Each server is independent, so tests running in parallel (Swift Testing's default) never see each
/// other's stubs. Requests reach a server through ``MockURLProtocol``, which routes them by a header
/// that the server's providers add as their last adapter step: it is removed from what is recorded, and
/// no monitor, logger, retrier or `Response.request` shows it.
///
/// ```swift
/// let server = MockServer()
/// server.stub(.get, "/v1/users/1", .json(User(id: 1, name: "Kim")))
/// let provider = server.makeProvider()
/// let user = try await provider.request(UserAPI.user(id: 1), as: User.self)
/// #expect(server.requests.count == 1)
/// ```
public final class MockServer: @unchecked Sendable {
    // @unchecked: `stubs`, `received`, `handedOut`, `firstKept`, `dropped`, `interrupted`,
    // `interruptionWaiters` and `requestWaiters` are guarded by `lock`.

    /// Answers one request.
    public typealias Handler = @Sendable (RecordedRequest) async throws -> MockResponse

    private struct Stub {
        let method: HTTPMethod?
        /// The path, ``MockPath/normalized(_:)``.
        let path: String?
        let handler: Handler

        init(method: HTTPMethod?, path: String?, handler: @escaping Handler) {
            self.method = method
            self.path = path.map(MockPath.normalized)
            self.handler = handler
        }
    }

    /// The value of ``MockURLProtocol/serverHeader`` that routes a request to this server.
    public let id = UUID().uuidString
    private let lock = NSLock()
    private var stubs: [Stub] = []
    private var received: [RecordedRequest] = []
    /// Whether ``nextRequest(matching:_:timeout:)`` returned the request at the same index of `received`.
    private var handedOut: [Bool] = []
    private var requestWaiters: [RequestWaiter] = []
    /// How many of the oldest recordings were dropped to stay within ``recordingLimit``.
    private var dropped = 0
    /// The index in `received` of the oldest request still kept.
    private var firstKept = 0
    private var interrupted = 0
    private var interruptionWaiters: [(count: Int, waiter: OneShotWait<Bool, Never>)] = []

    /// The most requests kept in ``requests``; older ones are dropped first (a soak test with millions
    /// of requests keeps bounded memory). About 600 bytes each, plus the bodies.
    public let recordingLimit: Int

    /// Creates an empty server. Unmatched requests get a `404` whose body names the request.
    ///
    /// - Parameter recordingLimit: the most requests kept in ``requests``; 10,000 by default.
    public init(recordingLimit: Int = 10_000) {
        self.recordingLimit = max(recordingLimit, 0)
        MockURLProtocol.register(self)
    }

    deinit {
        MockURLProtocol.unregister(id)
    }

    // MARK: Stubbing

    /// Answers `method` + `path` with `responses` in turn; the last one repeats.
    /// A later stub for the same request wins over an earlier one.
    ///
    /// `path` is matched against the path exactly as it goes on the wire (``RecordedRequest/percentEncodedPath``,
    /// RFC 9112 §3.2), without the query: `/v1/users` does not answer `/v1/users/` (a trailing slash is
    /// significant), and `/v1/files/a%2Fb` does not answer `/v1/files/a/b` (an encoded `/` is no separator,
    /// RFC 3986 §2.2). Characters a path cannot carry as they are (a space, `é`) may be written as they
    /// are: they are compared percent-encoded as UTF-8; the case of an escape's hex digits does not matter.
    public func stub(_ method: HTTPMethod, _ path: String, _ responses: MockResponse...) {
        precondition(!responses.isEmpty, "stub(_:_:_:) needs at least one response")
        let sequence = ResponseSequence(responses)
        add(Stub(method: method, path: path) { _ in sequence.next() })
    }

    /// Answers `method` + `path` with a closure, which may inspect the request, wait, or throw a `URLError`.
    public func stub(_ method: HTTPMethod, _ path: String, handler: @escaping Handler) {
        add(Stub(method: method, path: path, handler: handler))
    }

    /// Stubs `method path` with `resource`, which answers conditional requests with `304 Not Modified`
    /// and counts its answers (see ``MockResource``).
    public func stub(_ method: HTTPMethod, _ path: String, resource: MockResource) {
        stub(method, path) { request in resource.response(to: request) }
    }

    /// Answers every request that no method-and-path stub matches with a closure.
    public func stub(handler: @escaping Handler) {
        add(Stub(method: nil, path: nil, handler: handler))
    }

    private func add(_ stub: Stub) {
        lock.lock()
        defer { lock.unlock() }
        stubs.append(stub)
    }

    // MARK: What was received

    /// Every request received, in arrival order: the last ``recordingLimit`` of them.
    public var requests: [RecordedRequest] {
        lock.lock()
        defer { lock.unlock() }
        return Array(received[firstKept...])
    }

    /// The requests received for `method` + `path`, matched as stubs match (see ``stub(_:_:_:)``).
    public func requests(_ method: HTTPMethod, _ path: String) -> [RecordedRequest] {
        let path = MockPath.normalized(path)
        return requests.filter { $0.method == method.rawValue && MockPath.normalized($0.percentEncodedPath) == path }
    }

    /// How many requests were received but are no longer in ``requests`` (beyond ``recordingLimit``).
    public var droppedRecordingCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return dropped
    }

    /// Forgets the requests received so far and the interrupted count; the stubs stay.
    public func clearRecordings() {
        lock.lock()
        defer { lock.unlock() }
        received.removeAll()
        handedOut.removeAll()
        firstKept = 0
        dropped = 0
        interrupted = 0
    }

    /// How many requests were stopped (`stopLoading`) before their response was delivered,
    /// e.g. because the calling task was cancelled.
    public var interruptedCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return interrupted
    }

    /// Waits until at least `count` requests were stopped before their response was delivered (see
    /// ``interruptedCount``), and returns `true`; or returns `false` once `timeout` seconds passed or the
    /// waiting task was cancelled. For tests that check a transfer was stopped without polling. The
    /// default `timeout`, 30 s, leaves room for a loaded CI machine and still ends a failing test.
    ///
    /// ```swift
    /// for try await _ in stream { break }
    /// #expect(await server.waitForInterruptions(1))
    /// ```
    public func waitForInterruptions(_ count: Int = 1, timeout: TimeInterval = 30) async -> Bool {
        let waiter = OneShotWait<Bool, Never>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                waiter.set(continuation)
                lock.lock()
                if interrupted >= count {
                    lock.unlock()
                    waiter.resolve(.success(true))
                    return
                }
                interruptionWaiters.removeAll { $0.waiter.isResolved }   // timed out or cancelled earlier
                interruptionWaiters.append((count, waiter))
                lock.unlock()
                waiter.resolve(after: timeout, with: .success(false))
            }
        } onCancel: {
            waiter.resolve(.success(false))
        }
    }

    /// Returns the oldest request received for `method` and `path` (either `nil`: any) that this
    /// method has not returned before, waiting for it to arrive when there is none yet.
    ///
    /// A request that arrived before the call is found too, so a test can start a call in a task and
    /// then await its arrival without a race; each request is returned once, so two awaits find two
    /// requests. It throws ``WaitTimedOut`` when none arrived within `timeout` seconds (a failing test
    /// does not hang), and `CancellationError` when the awaiting task is cancelled. It returns when the
    /// request arrives, before its stub answers: cancelling the call then interrupts it. The default
    /// `timeout`, 30 s, leaves room for a loaded CI machine (a busy test run can take seconds to send a
    /// request) and still ends a failing test.
    ///
    /// ```swift
    /// let call = Task { try await provider.response(UserAPI.user(id: 1)) }
    /// let request = try await server.nextRequest(matching: .get, "/v1/users/1")
    /// call.cancel()
    /// ```
    ///
    /// Requests dropped beyond ``recordingLimit`` before the call are not found; ``clearRecordings()``
    /// forgets which were returned.
    public func nextRequest(matching method: HTTPMethod? = nil, _ path: String? = nil, timeout: TimeInterval = 30) async throws
        -> RecordedRequest
    {
        let waiter = RequestWaiter(method: method?.rawValue, path: path)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<RecordedRequest, any Error>) in
                waiter.wait.set(continuation)
                lock.lock()
                if let index = received.indices.dropFirst(firstKept).first(where: { !handedOut[$0] && waiter.matches(received[$0]) }) {
                    // Handed out only if this wait takes it (not when a cancellation resolved the wait first).
                    if waiter.wait.resolve(.success(received[index])) { handedOut[index] = true }
                    lock.unlock()
                    return
                }
                requestWaiters.removeAll { $0.wait.isResolved }   // timed out or cancelled earlier
                requestWaiters.append(waiter)
                lock.unlock()
                waiter.wait.resolve(after: timeout, with: .failure(WaitTimedOut(method: method?.rawValue, path: path, timeout: timeout)))
            }
        } onCancel: {
            waiter.wait.resolve(.failure(CancellationError()))
        }
    }

    /// What ``nextRequest(matching:_:timeout:)`` throws when no matching request arrived in time.
    public struct WaitTimedOut: Error, CustomStringConvertible {
        /// The method awaited, or `nil` for any.
        public let method: String?
        /// The path awaited, or `nil` for any.
        public let path: String?
        /// How long it waited, in seconds.
        public let timeout: TimeInterval

        /// Says what was awaited, e.g. `MockServer: no request for GET /v1/users/1 arrived within 10.0 s`.
        public var description: String {
            "MockServer: no request for \(method ?? "any method") \(path ?? "any path") arrived within \(timeout) s"
        }
    }

    // MARK: Providers

    /// Tags `request` so that ``MockURLProtocol`` routes it to this server: for a raw `URLSession`
    /// made from ``makeConfiguration()``.
    public func route(_ request: URLRequest) -> URLRequest {
        var request = request
        request.setValue(id, forHTTPHeaderField: MockURLProtocol.serverHeader)
        return request
    }

    /// A session configuration whose requests are answered by ``MockURLProtocol``. Requests must be
    /// routed with ``route(_:)``; ``makeProvider(interceptor:encoder:decoder:maximumAttempts:deadline:maximumResponseSize:cache:cachePolicy:now:errorMapper:monitors:sleep:)``
    /// does that for you, and ``makeConfiguration(basedOn:)`` routes every request of a provider made from it.
    public func makeConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [MockURLProtocol.self]
        return configuration
    }

    /// A provider whose requests this server answers. `interceptor` runs as the provider's own; the
    /// routing header is added after it, so what it adapts is what the server records. The provider
    /// keeps the server alive.
    ///
    /// It takes a few of a provider's options. To test the provider the app ships, with all of its
    /// options (configuration, server trust, redirects, cache, …), make it with the app's own factory
    /// from ``makeConfiguration(basedOn:)`` instead.
    public func makeProvider(
        interceptor: (any RequestInterceptor)? = nil,
        encoder: JSONEncoder = JSONEncoder(),
        decoder: JSONDecoder = JSONDecoder(),
        maximumAttempts: Int = NetworkProvider.defaultMaximumAttempts,
        deadline: TimeInterval = NetworkProvider.defaultDeadline,
        maximumResponseSize: Int = NetworkProvider.defaultMaximumResponseSize,
        cache: (any ResponseCache)? = nil,
        cachePolicy: CachePolicy = .http,
        now: @escaping @Sendable () -> Date = { Date() },
        errorMapper: ErrorResponseMapper? = nil,
        monitors: [any EventMonitor] = [],
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = NetworkProvider.taskSleep
    ) -> NetworkProvider {
        makeProvider(
            envelope: .unwrapped, interceptor: interceptor, encoder: encoder, decoder: decoder, maximumAttempts: maximumAttempts, deadline: deadline,
            maximumResponseSize: maximumResponseSize, cache: cache, cachePolicy: cachePolicy, now: now, errorMapper: errorMapper, monitors: monitors,
            sleep: sleep)
    }

    // MARK: Called by MockURLProtocol

    func receive(_ request: RecordedRequest) -> Handler {
        lock.lock()
        defer { lock.unlock() }
        received.append(request)
        handedOut.append(false)
        if !requestWaiters.isEmpty {
            requestWaiters.removeAll { $0.wait.isResolved }   // timed out or cancelled
            if let index = requestWaiters.firstIndex(where: { $0.matches(request) && $0.wait.resolve(.success(request)) }) {
                requestWaiters.remove(at: index)
                handedOut[handedOut.count - 1] = true
            }
        }
        if received.count - firstKept > recordingLimit {
            firstKept += 1
            dropped += 1
            if firstKept >= max(recordingLimit, 64) {   // compact now and then: amortised O(1) per request
                received.removeFirst(firstKept)
                handedOut.removeFirst(firstKept)
                firstKept = 0
            }
        }
        let path = MockPath.normalized(request.percentEncodedPath)
        let match =
            stubs.last { stub in
                stub.method?.rawValue == request.method && stub.path == path
            } ?? stubs.last { $0.method == nil }
        return match?.handler ?? Self.notFound
    }

    private static let notFound: Handler = { request in
        MockResponse(statusCode: 404, body: Data("MockServer: no stub for \(request.method) \(request.percentEncodedPath)".utf8))
    }

    func noteInterrupted() {
        lock.lock()
        interrupted += 1
        let count = interrupted
        let ready = interruptionWaiters.filter { $0.count <= count }.map(\.waiter)
        interruptionWaiters.removeAll { $0.count <= count }
        lock.unlock()
        for waiter in ready { waiter.resolve(.success(true)) }
    }
}

/// One ``MockServer/nextRequest(matching:_:timeout:)`` call: what it waits for, and its wait, resolved
/// once by a request, its timeout or its cancellation.
private final class RequestWaiter: Sendable {
    let method: String?
    let path: String?
    let wait = OneShotWait<RecordedRequest, any Error>()

    init(method: String?, path: String?) {
        self.method = method
        self.path = path.map(MockPath.normalized)
    }

    func matches(_ request: RecordedRequest) -> Bool {
        (method == nil || method == request.method) && (path == nil || path == MockPath.normalized(request.percentEncodedPath))
    }
}

/// Hands out a list of responses in turn, repeating the last.
private final class ResponseSequence: @unchecked Sendable {
    // @unchecked: `index` is guarded by `lock`.
    private let responses: [MockResponse]
    private let lock = NSLock()
    private var index = 0

    init(_ responses: [MockResponse]) { self.responses = responses }

    func next() -> MockResponse {
        lock.lock()
        defer { lock.unlock() }
        let response = responses[min(index, responses.count - 1)]
        index += 1
        return response
    }
}
