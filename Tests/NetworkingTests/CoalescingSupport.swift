import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A monitor that counts the calls that joined another, and lets a test wait until so many did.
final class JoinCounter: EventMonitor, @unchecked Sendable {
    // @unchecked: `joined`, `finished` and `waiters` are guarded by `lock`.
    private let lock = NSLock()
    private var joined = 0
    private var waiters: [(id: UUID, count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return joined
    }

    /// Removes the waiter `id`, if it still waits; with the joins so far.
    private func takeWaiter(_ id: UUID) -> (waiter: CheckedContinuation<Void, Never>?, joined: Int) {
        lock.lock()
        defer { lock.unlock() }
        let waiter = waiters.first { $0.id == id }?.continuation
        waiters.removeAll { $0.id == id }
        return (waiter, joined)
    }

    func callDidJoin(_ request: URLRequest, context: RequestContext) {
        lock.lock()
        joined += 1
        let ready = waiters.filter { $0.count <= joined }
        waiters.removeAll { $0.count <= joined }
        lock.unlock()
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Returns once `count` calls joined another; after 180 s without them (a machine running the whole
    /// suite under the thread sanitizer took more than 30 s for 200 calls), records an issue and returns
    /// (a failure, not a hang).
    func waitForJoins(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async {
        let id = UUID()
        let timeout = Task { [weak self] in
            try? await Task.sleep(nanoseconds: 180_000_000_000)
            guard let self, !Task.isCancelled else { return }
            let (waiter, joined) = takeWaiter(id)
            if let waiter {
                Issue.record("only \(joined) of \(count) calls joined", sourceLocation: sourceLocation)
                waiter.resume()
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if joined >= count {
                lock.unlock()
                continuation.resume()
            } else {
                waiters.append((id, count, continuation))
                lock.unlock()
            }
        }
        timeout.cancel()
    }
}

/// A `GET` whose deadline and headers a test chooses; one type, so that its calls may share.
struct CoalescedEndpoint: Endpoint {
    var baseURL = URL(string: "https://api.example.com/v1/")!
    var path = "/users/1"
    var method: HTTPMethod = .get
    var headers: [String: String] = [:]
    var body: RequestBody = .none
    var deadline: TimeInterval?
    var coalescesIdenticalCalls: Bool?
    var requiresAuthentication = true
}

/// A server whose answer to every request waits until `gate` fires.
func gatedServer(gate: Signal, response: MockResponse = .json(raw: #"{"id":1}"#)) -> MockServer {
    let server = MockServer()
    server.stub(handler: { _ in
        await gate.wait()
        return response
    })
    return server
}

/// Whether `condition` holds within 60 s, looked at every 10 ms: for a test that must tell which of two
/// outcomes a race had (each sure to come), not for waiting out a delay.
func eventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<6_000 {
        if condition() { return true }
        do { try await Task.sleep(nanoseconds: 10_000_000) } catch { break }   // cancelled: the answer as it stands
    }
    return condition()
}
