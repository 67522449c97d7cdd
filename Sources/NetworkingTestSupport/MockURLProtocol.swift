import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `URLProtocol` that answers requests from the ``MockServer`` named in their
/// ``serverHeader``, without touching the network.
///
/// You rarely use it directly: ``MockServer/makeProvider(interceptor:encoder:decoder:maximumAttempts:errorMapper:)``
/// wires it up. Requests without the header are left to other protocols.
public final class MockURLProtocol: URLProtocol {

    /// The header that names the ``MockServer`` a request is for.
    public static let serverHeader = "X-Mock-Server"

    private static let registryLock = NSLock()
    nonisolated(unsafe) private static var servers: [String: WeakServer] = [:]

    private struct WeakServer {
        weak var server: MockServer?
    }

    static func register(_ server: MockServer) {
        registryLock.lock(); defer { registryLock.unlock() }
        servers[server.id] = WeakServer(server: server)
    }

    static func unregister(_ id: String) {
        registryLock.lock(); defer { registryLock.unlock() }
        servers[id] = nil
    }

    private static func server(for request: URLRequest) -> MockServer? {
        guard let id = request.value(forHTTPHeaderField: serverHeader) else { return nil }
        registryLock.lock(); defer { registryLock.unlock() }
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
        load.start(RecordedRequest(request), on: Self.server(for: request), owner: self)
    }

    public override func stopLoading() {
        load.stop()
    }
}

/// One load of a ``MockURLProtocol``: runs the stub's handler in a task and reports to the
/// protocol's client exactly once, unless `stopLoading` came first.
private final class Load: @unchecked Sendable {
    // @unchecked: every property is guarded by `lock`; `owner` is only used to call its `client`, which
    // URLSession allows from any thread, and it outlives the load (it owns it).
    private unowned(unsafe) var owner: MockURLProtocol?
    private let lock = NSLock()
    private var work: Task<Void, Never>?
    private var finished = false
    private var server: MockServer?

    func start(_ recorded: RecordedRequest, on server: MockServer?, owner: MockURLProtocol) {
        lock.lock()
        self.owner = owner
        self.server = server
        lock.unlock()
        guard let server else { return fail(URLError(.unsupportedURL)) }
        let handler = server.receive(recorded)
        let task = Task { [self] in
            let response: MockResponse
            do {
                response = try await handler(recorded)
                if response.delay > 0 {
                    try await Task.sleep(nanoseconds: UInt64(response.delay * 1_000_000_000))
                }
            } catch let error as URLError {
                fail(error)
                return
            } catch {
                // Cancelled by stopLoading, or the handler threw something that is not a URLError.
                fail(URLError(.cancelled))
                return
            }
            deliver(response, for: recorded.url)
        }
        lock.lock()
        work = task
        let stopped = finished
        lock.unlock()
        if stopped { task.cancel() }
    }

    func stop() {
        lock.lock()
        let wasFinished = finished
        finished = true
        let work = self.work
        let server = self.server
        lock.unlock()
        work?.cancel()
        if !wasFinished { server?.noteInterrupted() }
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

    /// Runs `body` once, unless the load was already finished or stopped.
    private func finish(_ body: (any URLProtocolClient, MockURLProtocol) -> Void) {
        lock.lock()
        guard !finished, let owner else { lock.unlock(); return }
        finished = true
        lock.unlock()
        if let client = owner.client { body(client, owner) }
    }
}
