import Foundation
import Networking
import NetworkingTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A hundred cells ask for the same profile at once, and a host busy with a slow call: identical calls share
/// one exchange, and queued calls go out by priority, first come first served within one.
enum SchedulingDemo {
    struct Profile: Decodable, Sendable {
        let name: String
    }

    struct Me: Endpoint {
        var baseURL: URL { URL(string: "https://api.example.com/v1")! }
        var path: String { "/me" }
    }

    struct Thumbnail: Endpoint {
        let id: Int
        let urgent: Bool
        var baseURL: URL { URL(string: "https://images.example.com")! }
        var path: String { "/thumbnails/\(id)" }
        var priority: RequestPriority { urgent ? .high : .low }
    }

    static func run() async throws {
        try await coalescing()
        try await priorities()
    }

    private static func coalescing() async throws {
        print("== A hundred identical calls, one request")
        let gate = Gate()
        let server = MockServer()
        server.stub(.get, "/v1/me") { request in
            print("server   \(request.method) \(request.path)")
            await gate.wait()   // answers once every other call has joined this one
            return .json(raw: #"{"name":"Kim"}"#)
        }
        let joins = Counter(target: 99, then: { gate.open() })
        let provider = server.makeProvider(monitors: [joins])
        let profiles = try await withThrowingTaskGroup(of: (Profile, Bool).self) { group in
            for _ in 0..<100 {
                group.addTask {
                    let response = try await provider.response(Me())
                    return (try JSONDecoder().decode(Profile.self, from: response.data), response.report.joinedExistingCall)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let names = Set(profiles.map(\.0.name)).sorted()
        print("callers  \(profiles.count), each with its own answer (\(names.joined()))")
        print("joined   \(profiles.filter(\.1).count) calls joined the one in flight")
        print("sent     \(server.requests.count) request")
        print()
    }

    private static func priorities() async throws {
        print("== One slot for a host, and a queue by priority")
        let (started, gate) = (Gate(), Gate())
        let server = MockServer()
        server.stub { request in
            print("server   \(request.method) \(request.path)")
            if request.path == "/thumbnails/0" {   // a slow download holds the slot
                started.open()
                await gate.wait()
            }
            return .status(200)
        }
        let queued = Counter(target: 4, then: { gate.open() })
        let provider = NetworkProvider(
            scheduling: Scheduling(maximumCallsPerHost: 1), configuration: server.makeConfiguration(basedOn: .ephemeral),
            monitors: [queued])
        let slow = Task { try await provider.response(Thumbnail(id: 0, urgent: false)) }
        await started.wait()
        var calls: [Task<Response, any Error>] = []
        for (id, urgent) in [(1, false), (2, false), (3, false), (4, true)] {
            calls.append(Task { try await provider.response(Thumbnail(id: id, urgent: urgent)) })
            await queued.waitFor(calls.count)   // queued in this order: 1, 2, 3 (low), then 4 (high)
        }
        _ = try await slow.value
        var waited: [String] = []
        for call in calls {
            let response = try await call.value
            if response.report.queueWait > 0 { waited.append(response.request.url?.lastPathComponent ?? "") }
        }
        print("queued   thumbnails \(waited.joined(separator: ", ")) waited for the slot (CallReport.queueWait); the urgent one went first")
        print()
    }

    /// Opens once; `wait()` returns when it is open.
    final class Gate: @unchecked Sendable {
        // @unchecked: `isOpen` and `waiters` are guarded by `lock`.
        private let lock = NSLock()
        private var isOpen = false
        private var waiters: [CheckedContinuation<Void, Never>] = []

        func wait() async {
            await withCheckedContinuation { continuation in
                lock.lock()
                if isOpen {
                    lock.unlock()
                    continuation.resume()
                } else {
                    waiters.append(continuation)
                    lock.unlock()
                }
            }
        }

        func open() {
            lock.lock()
            isOpen = true
            let waiting = waiters
            waiters = []
            lock.unlock()
            for waiter in waiting { waiter.resume() }
        }
    }

    /// Counts the calls that joined another or waited in the queue, and calls `then` at `target`.
    final class Counter: EventMonitor, @unchecked Sendable {
        // @unchecked: `count` and `waiters` are guarded by `lock`.
        private let lock = NSLock()
        private var count = 0
        private var waiters: [(Int, CheckedContinuation<Void, Never>)] = []
        private let target: Int
        private let then: @Sendable () -> Void

        init(target: Int, then: @escaping @Sendable () -> Void) {
            self.target = target
            self.then = then
        }

        func callDidJoin(_ request: URLRequest, context: RequestContext) { add() }

        func queueWaitDidStart(origin: Origin, context: RequestContext) { add() }

        /// Returns once `count` calls were counted.
        func waitFor(_ count: Int) async {
            await withCheckedContinuation { continuation in
                lock.lock()
                if self.count >= count {
                    lock.unlock()
                    continuation.resume()
                } else {
                    waiters.append((count, continuation))
                    lock.unlock()
                }
            }
        }

        private func add() {
            lock.lock()
            count += 1
            let reached = count
            let ready = waiters.filter { $0.0 <= reached }.map(\.1)
            waiters.removeAll { $0.0 <= reached }
            lock.unlock()
            for waiter in ready { waiter.resume() }
            if reached == target { then() }
        }
    }
}
