import Foundation
import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `URLProtocol` that answers requests from the ``MockServer`` named in their
/// ``serverHeader``, without touching the network.
///
/// You rarely use it directly: ``MockServer/makeProvider(interceptor:encoder:decoder:maximumAttempts:deadline:maximumResponseSize:cache:cachePolicy:now:errorMapper:monitors:sleep:)``
/// wires it up. Requests without the header are left to other protocols.
///
/// A `NetworkProvider` whose configuration lists this protocol (``MockServer/makeConfiguration()``)
/// sends the header to every redirect hop, so a redirect to another origin reaches the same server, and
/// never shows it to monitors, retriers or `Response.request`. That is a setting of that provider,
/// read from its own configuration: a provider whose session does not send through the mock keeps and
/// hides nothing of that name.
public final class MockURLProtocol: URLProtocol, HeaderRoutedURLProtocol {

    /// The header that names the ``MockServer`` a request is for.
    public static let serverHeader = "X-Mock-Server"

    /// ``serverHeader``: what providers whose session sends through this protocol keep on every hop and hide.
    package static var routingHeader: String { serverHeader }

    private static let registryLock = NSLock()
    nonisolated(unsafe) private static var servers: [String: WeakServer] = [:]

    private struct WeakServer {
        weak var server: MockServer?
    }

    static func register(_ server: MockServer) {
        registryLock.lock()
        defer { registryLock.unlock() }
        servers[server.id] = WeakServer(server: server)
    }

    static func unregister(_ id: String) {
        registryLock.lock()
        defer { registryLock.unlock() }
        servers[id] = nil
    }

    private static func server(for request: URLRequest) -> MockServer? {
        guard let id = request.value(forHTTPHeaderField: serverHeader) else { return nil }
        registryLock.lock()
        defer { registryLock.unlock() }
        return servers[id]?.server
    }

    private let load = Load()

    public override class func canInit(with request: URLRequest) -> Bool {
        request.value(forHTTPHeaderField: serverHeader) != nil
    }

    public override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        request
    }

    public override func startLoading() {
        load.start(RecordedRequest(request, task: task), on: Self.server(for: request), owner: self, requestTimeout: request.timeoutInterval)
    }

    /// The timeout URLSession applies to a request whose `timeoutInterval` is `requested`: that, or,
    /// when it is the default (60 s, what a request has when nothing set it), the `session`
    /// configuration's `timeoutIntervalForRequest`, as swift-corelibs-foundation decides. Without the
    /// session (on Apple platforms the mock cannot reach it), the request's own.
    static func idleTimeout(requested: TimeInterval, session: URLSession?) -> TimeInterval {
        guard requested == defaultRequestTimeout, let session else { return requested }
        return session.configuration.timeoutIntervalForRequest
    }

    /// What `URLRequest.timeoutInterval` is when nothing set it.
    static let defaultRequestTimeout: TimeInterval = 60

    public override func stopLoading() {
        load.stop()
    }
}

/// One load of a ``MockURLProtocol``: runs the stub's handler in a task and reports to the
/// protocol's client exactly once, unless `stopLoading` came first.
private final class Load: PlacedAttempt, @unchecked Sendable {
    // @unchecked: every property is guarded by `lock`. `owner` owns this load; it is only used to reach
    // its client before the load has finished or been stopped, while URLSession still holds it.
    private weak var owner: MockURLProtocol?
    /// Its place in the heap of `idleWatch`, under that watch's lock.
    var watchSlot = 0
    private let lock = NSLock()
    private var work: Task<Void, Never>?
    private var finished = false
    private var server: MockServer?
    /// Where the client is called: found once in `start`.
    private var reporter: ClientThread?
    /// Seconds without a byte after which the load fails with `timedOut` (URLSession's request
    /// timeout is an idle timeout); no timer when it is not in (0, a day].
    private var idleTimeout: TimeInterval = 0
    /// Times out every load whose ``idleTimeout`` passed without a byte, with one timer for all of them
    /// (a timer per request would cost every test and benchmark that uses the mock).
    private static let idleWatch = AttemptWatch()

    func start(_ recorded: RecordedRequest, on server: MockServer?, owner: MockURLProtocol, requestTimeout: TimeInterval) {
        let reporter = ClientThread.current(for: owner.task)
        let idleTimeout = MockURLProtocol.idleTimeout(requested: requestTimeout, session: reporter?.session)
        lock.lock()
        self.owner = owner
        self.server = server
        self.reporter = reporter
        self.idleTimeout = idleTimeout > 0 && idleTimeout <= 86_400 ? idleTimeout : 0   // also NaN
        lock.unlock()
        guard let server else { return fail(URLError(.unsupportedURL)) }
        let handler = server.receive(recorded)
        let task = Task { [self] in
            // The timeout starts with the stub: how long the test process took to start this task
            // (seconds, when hundreds of busy tests hold the cooperative pool) is not the server's time,
            // as the network's is not for a real server.
            restartIdleTimer()
            let response: MockResponse
            do {
                response = try await handler(recorded)
            } catch let error as URLError {
                fail(error)
                return
            } catch {
                // Cancelled by stopLoading (nothing is reported then), or the handler threw something
                // that is not a URLError: a bug in the stub, reported as a bad response carrying it.
                fail(Task.isCancelled ? URLError(.cancelled) : URLError(.badServerResponse, userInfo: [NSUnderlyingErrorKey: error]))
                return
            }
            readBody(of: recorded.body.count, pacedBy: response.uploadThrottle, from: 0, waited: false) { load in
                load.after(response.delay) { load in
                    if response.chunks.isEmpty {
                        load.deliver(response, for: recorded.url)
                    } else {
                        load.deliverChunks(response, for: recorded.url)
                    }
                }
            }
        }
        lock.lock()
        work = task
        let stopped = finished
        lock.unlock()
        if stopped { task.cancel() }
    }

    /// Reads the request's body of `total` bytes as a server does, a chunk at a time from `start` (each
    /// `throttle.interval` after the one before; `waited`: the pause before the one at `start` has passed),
    /// reporting each to the session as upload progress (see ``UploadProgress``), then runs `next`. Each
    /// chunk resets the idle timeout, as a body being sent does. At once when nothing can be reported.
    private func readBody(
        of total: Int, pacedBy throttle: (bytesPerChunk: Int, interval: TimeInterval)?, from start: Int, waited: Bool,
        then next: @escaping @Sendable (Load) -> Void
    ) {
        lock.lock()
        let session = reporter?.session
        lock.unlock()
        guard let session else { return next(self) }
        let size = max(throttle?.bytesPerChunk ?? UploadProgress.defaultChunkSize, 1)
        var sent = start
        while sent < total {
            if sent > 0, let pause = throttle?.interval, pause > 0, !(waited && sent == start) {
                return after(pause) { [sent] load in load.readBody(of: total, pacedBy: throttle, from: sent, waited: true, then: next) }
            }
            guard !isStopped else { return }
            let chunk = min(size, total - sent)
            sent += chunk
            let totalSent = sent
            report { _, owner in
                UploadProgress.report(Int64(chunk), totalSent: Int64(totalSent), of: Int64(total), task: owner.task, session: session)
            }
            restartIdleTimer()
        }
        next(self)
    }

    /// Runs `body` after `seconds`, unless the load is stopped by then: at once for zero, a negative
    /// delay and NaN; never for `.infinity` or anything longer than a year (a response that never comes,
    /// until the load is stopped).
    ///
    /// The clock keeps the delay (a dispatch timer on ``clock``), not a task of the test's: a test run
    /// that keeps the cooperative pool busy stretches neither a stub's delay nor the pauses between its
    /// chunks, as it would not stretch a real server's. A stopped load is not kept alive by a timer still
    /// pending.
    private func after(_ seconds: TimeInterval, _ body: @escaping @Sendable (Load) -> Void) {
        guard seconds > 0 else { return body(self) }   // also NaN
        guard seconds <= Self.longestDelay else { return }
        Self.clock.asyncAfter(deadline: .now() + seconds) { [weak self] in
            guard let self, !self.isStopped else { return }
            body(self)
        }
    }

    /// Where delayed stub work runs: a serial queue of its own, which gets a thread even while the
    /// global queues' threads, which run Swift's tasks on Linux, are all busy. Its work is short: it hands
    /// each response part to the client's queue.
    private static let clock = DispatchQueue(label: "NetworkingTestSupport.MockURLProtocol.clock")

    /// The longest delay the mock waits out: a year. Anything longer never ends.
    private static let longestDelay: TimeInterval = 365 * 86_400

    /// Whether the load was finished or stopped: nothing more is reported then.
    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return finished
    }

    func stop() {
        lock.lock()
        let wasFinished = finished
        finished = true
        owner = nil
        let work = self.work
        let server = self.server
        lock.unlock()
        Self.idleWatch.unwatch(placed: self)
        work?.cancel()
        if !wasFinished { server?.noteInterrupted() }
    }

    /// (Re)starts the idle timer: the stub started, or bytes were just reported. The watch checks
    /// ten times a second, so the timeout fires about 0.1 s late at most, unless the process's global
    /// dispatch threads are all busy (on Linux they also run Swift's tasks): then later, never earlier.
    private func restartIdleTimer() {
        lock.lock()
        defer { lock.unlock() }
        guard !finished, idleTimeout > 0 else { return }
        Self.idleWatch.watch(placed: self, until: .now() + idleTimeout)
    }

    /// The idle timeout passed: fails the load with `timedOut`, as URLSession would, and stops the
    /// stub's work. The server counts the request as interrupted (the client gave up on it).
    func expire() {
        lock.lock()
        let (work, server) = (self.work, self.server)
        lock.unlock()
        finish { client, owner in
            client.urlProtocol(owner, didFailWithError: URLError(.timedOut))
            server?.noteInterrupted()
        }
        work?.cancel()
    }

    func fail(_ error: URLError) {
        finish { client, owner in client.urlProtocol(owner, didFailWithError: error) }
    }

    private func deliver(_ response: MockResponse, for url: URL) {
        if let error = response.error { return fail(error) }
        guard let http = HTTPURLResponse(url: url, statusCode: response.statusCode, httpVersion: "HTTP/1.1", headerFields: response.headers) else {
            return fail(URLError(.badServerResponse))
        }
        finish { client, owner in
            client.urlProtocol(owner, didReceive: http, cacheStoragePolicy: .notAllowed)
            if !response.body.isEmpty { client.urlProtocol(owner, didLoad: response.body) }
            client.urlProtocolDidFinishLoading(owner)
        }
    }

    /// Sends the head, then each chunk after its delay, then the end; stops early if the load is stopped.
    private func deliverChunks(_ response: MockResponse, for url: URL) {
        guard let http = HTTPURLResponse(url: url, statusCode: response.statusCode, httpVersion: "HTTP/1.1", headerFields: response.headers) else {
            return fail(URLError(.badServerResponse))
        }
        report { client, owner in client.urlProtocol(owner, didReceive: http, cacheStoragePolicy: .notAllowed) }
        restartIdleTimer()
        sendChunks(of: response, from: 0, waited: false)
    }

    /// Sends `response`'s chunks from `first` on, each after its delay (`waited`: the first one's delay
    /// has passed), then its error or the end. A chunk without a delay is sent in the same loop.
    private func sendChunks(of response: MockResponse, from first: Int, waited: Bool) {
        for index in first..<response.chunks.count {
            let (data, delay) = response.chunks[index]
            if delay > 0, !(waited && index == first) {
                return after(delay) { load in load.sendChunks(of: response, from: index, waited: true) }
            }
            guard !isStopped else { return }
            report { client, owner in client.urlProtocol(owner, didLoad: data) }
            restartIdleTimer()
        }
        if let error = response.error { return fail(error) }
        finish { client, owner in client.urlProtocolDidFinishLoading(owner) }
    }

    /// Runs `body` unless the load was already finished or stopped, where the client expects to be
    /// called, without finishing the load (a streamed response's head and chunks).
    private func report(_ body: @escaping @Sendable (any URLProtocolClient, MockURLProtocol) -> Void) {
        call(body, finishing: false)
    }

    /// Runs `body` once, unless the load was already finished or stopped, where the client expects
    /// to be called (see ``ClientThread``).
    private func finish(_ body: @escaping @Sendable (any URLProtocolClient, MockURLProtocol) -> Void) {
        call(body, finishing: true)
    }

    private func call(_ body: @escaping @Sendable (any URLProtocolClient, MockURLProtocol) -> Void, finishing: Bool) {
        let run: @Sendable () -> Void = { [self] in
            lock.lock()
            guard !finished, let owner else {
                lock.unlock()
                return
            }
            if finishing { finished = true }
            lock.unlock()
            if finishing { Self.idleWatch.unwatch(placed: self) }
            if let client = owner.client { body(client, owner) }
        }
        lock.lock()
        let reporter = self.reporter
        lock.unlock()
        if let reporter { reporter.run(run) } else { run() }
    }
}
