import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An endpoint of the scheduling tests: `GET <host>/v1/<path>`, with a priority, deadline and timeout.
struct ScheduledCall: Endpoint {
    var baseURL = URL(string: "https://api.example.com/v1/")!
    var path = "items"
    var priority: RequestPriority = .normal
    var deadline: TimeInterval?
    var timeout: TimeInterval?
    var maximumResponseSize: Int?
    var requiresAuthentication = false

    init(_ path: String = "items", host: String = "api.example.com", priority: RequestPriority = .normal) {
        self.baseURL = URL(string: "https://\(host)/v1/")!
        self.path = path
        self.priority = priority
    }
}

/// A provider that sends through `server` under `scheduling`: the app's own kind, made from the server's
/// configuration. Coalescing off unless `coalescing`: the limits' tests send identical calls that each
/// mean to hold a slot or a place in the queue.
func makeScheduledProvider(
    _ server: MockServer,
    _ scheduling: Scheduling,
    coalescing: Bool = false,
    interceptor: (any RequestInterceptor)? = nil,
    deadline: TimeInterval = NetworkProvider.defaultDeadline,
    maximumResponseSize: Int = NetworkProvider.defaultMaximumResponseSize,
    monitors: [any EventMonitor] = []
) -> NetworkProvider {
    var scheduling = scheduling
    scheduling.coalescesIdenticalCalls = scheduling.coalescesIdenticalCalls && coalescing
    return NetworkProvider(
        scheduling: scheduling, configuration: server.makeConfiguration(basedOn: .ephemeral), interceptor: interceptor, deadline: deadline,
        maximumResponseSize: maximumResponseSize, monitors: monitors)
}

/// Counts the requests a server is working on at once, in all and per host, and the most seen.
final class ConcurrencyMeter: @unchecked Sendable {
    // @unchecked: every `var` is guarded by `lock`.
    private let lock = NSLock()
    private var current: [String: Int] = [:]
    private var total = 0
    private var peaks: [String: Int] = [:]
    private var totalPeak = 0

    func enter(_ host: String) {
        lock.lock()
        defer { lock.unlock() }
        current[host, default: 0] += 1
        total += 1
        peaks[host] = max(peaks[host] ?? 0, current[host] ?? 0)
        totalPeak = max(totalPeak, total)
    }

    func leave(_ host: String) {
        lock.lock()
        defer { lock.unlock() }
        current[host, default: 0] -= 1
        total -= 1
    }

    /// The most requests to `host` worked on at once.
    func peak(_ host: String) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return peaks[host] ?? 0
    }

    /// The most requests worked on at once, to all hosts.
    var peak: Int {
        lock.lock()
        defer { lock.unlock() }
        return totalPeak
    }
}

/// Records the queue events the monitors are told, in order.
final class QueueEvents: EventMonitor, @unchecked Sendable {
    let events = Recorder<String>()
    func queueWaitDidStart(origin: Origin, context: RequestContext) { events.append("start \(origin)") }
    func queueWaitDidEnd(duration: TimeInterval, error: (any Error)?, context: RequestContext) {
        events.append(error.map { "end: \($0)" } ?? "end")
    }
    func taskDidStart(_ request: URLRequest, context: RequestContext) { events.append("task") }
}

/// Waits until `count` calls wait in `provider`'s queue.
func waitUntilQueued(_ count: Int, in provider: NetworkProvider) async {
    await pollUntil { provider.slots.waitingCount == count }
}

/// Holds the requests for a path open until ``release()``: a server busy with them.
final class HeldAnswers: Sendable {
    let signal = Signal()
    /// Stubs `path` on `server` to answer `answer` once released, counting each request in `meter`.
    func stub(_ server: MockServer, _ path: String, answer: MockResponse = .json(["ok": true]), meter: ConcurrencyMeter? = nil) {
        let signal = self.signal
        server.stub(.get, path) { request in
            let host = request.url.host ?? ""
            meter?.enter(host)
            defer { meter?.leave(host) }
            await signal.wait()
            return answer
        }
    }

    func release() { signal.fire() }
}
