// The probe's modes for issue 33's scheduling lines (see main.swift and compare.sh):
//   provider-coalesced <n>                groups of 1,000 concurrent identical GETs (<n> a multiple of 1,000)
//                                         through an app's provider (no interceptor, the routing header from
//                                         the configuration, default Scheduling: identical calls coalesce); the
//                                         server holds its answer until every caller of the group has started
//                                         (and 1 s more), so the group shares one exchange; fails unless every
//                                         group made exactly one, and prints the count
//   in-flight-concurrent <n>              <n> concurrent calls, each to its own path (nothing to coalesce),
//                                         through a provider with Scheduling(maximumCallsPerHost: 6); the mock
//                                         answers each after 5 ms, a deadline of a day (valgrind is slow).
//                                         64 concurrent and 8 sequential calls warm up
//                                         first, in every run of every in-flight mode
//   in-flight-sequential <n>              the same calls one at a time, the same provider and server
//   in-flight-memory <n>                  in-flight-concurrent run natively: prints the peak RSS growth of the
//                                         <n> calls per call, in KiB (VmHWM after ÷ VmRSS before, from
//                                         /proc/self/status); the server keeps no recordings
//   in-flight-memory-unlimited <n>        the same with no effective limit (Scheduling(maximumCalls: 1<<30,
//                                         maximumCallsPerHost: 1<<30)): every call in flight at once
import Foundation
import Networking
import NetworkingTestSupport
import SharedFixtures

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Calls per coalesced group.
let coalescedGroupSize = 1_000

/// A GET of its own path, so that concurrent calls never share an exchange.
struct ItemEndpoint: Endpoint {
    let baseURL: URL
    let index: Int
    var path: String { "/users/\(index)" }
}

/// Counts callers as they start; `all()` returns once `expected` did.
final class Arrivals: @unchecked Sendable {
    // @unchecked: `count` and `waiters` are guarded by `lock`.
    private let lock = NSLock()
    private let expected: Int
    private var count = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(expected: Int) { self.expected = expected }

    func arrive() {
        lock.lock()
        count += 1
        let ready = count >= expected ? waiters : []
        if count >= expected { waiters = [] }
        lock.unlock()
        for waiter in ready { waiter.resume() }
    }

    func all() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if count >= expected {
                lock.unlock()
                continuation.resume()
            } else {
                waiters.append(continuation)
                lock.unlock()
            }
        }
    }
}

/// The group now running (replaced between groups, which never overlap).
final class CurrentArrivals: @unchecked Sendable {
    // @unchecked: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value = Arrivals(expected: 0)
    var arrivals: Arrivals {
        get {
            lock.lock()
            defer { lock.unlock() }
            return value
        }
        set {
            lock.lock()
            value = newValue
            lock.unlock()
        }
    }
}

/// A value of `/proc/self/status` in KiB (`VmRSS`, `VmHWM`), 0 where there is none.
func statusKiB(_ field: String) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? 0
    }
    return 0
}

enum SchedulingFailure: Error {
    /// Coalesced groups made this many exchanges (expected: one per group).
    case exchanges(Int, groups: Int)
    case wrongUser(Int)
}

/// Runs a scheduling mode; `false` when `mode` is not one.
func runSchedulingMode(_ mode: String, count: Int) async throws -> Bool {
    let base = URL(string: "https://api.example.com/v1")!
    switch mode {
    case "provider-coalesced":
        let server = MockServer()
        let current = CurrentArrivals()
        server.stub(handler: { _ in
            await current.arrivals.all()
            try await Task.sleep(nanoseconds: 1_000_000_000)   // the last callers reach the group
            return .json(User.sample)
        })
        let configuration = server.makeConfiguration()
        configuration.httpAdditionalHeaders = [MockURLProtocol.serverHeader: server.id]
        let provider = NetworkProvider(configuration: configuration)
        let groups = count / coalescedGroupSize
        for _ in 0..<groups {
            let arrivals = Arrivals(expected: coalescedGroupSize)
            current.arrivals = arrivals
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<coalescedGroupSize {
                    group.addTask {
                        arrivals.arrive()
                        return try await provider.request(UserEndpoint(baseURL: base), as: User.self).id
                    }
                }
                for try await id in group where id != 1 { throw SchedulingFailure.wrongUser(id) }
            }
        }
        let exchanges = server.requests.count
        print("exchanges: \(exchanges) for \(groups) groups of \(coalescedGroupSize) identical calls")
        if exchanges != groups { throw SchedulingFailure.exchanges(exchanges, groups: groups) }
        return true
    case "in-flight-concurrent", "in-flight-sequential", "in-flight-memory", "in-flight-memory-unlimited":
        let server = MockServer(recordingLimit: mode.hasPrefix("in-flight-memory") ? 0 : 10_000)
        server.stub(handler: { _ in MockResponse.json(User.sample).delayed(by: 0.005) })
        let configuration = server.makeConfiguration()
        configuration.httpAdditionalHeaders = [MockURLProtocol.serverHeader: server.id]
        let scheduling =
            mode == "in-flight-memory-unlimited"
            ? Scheduling(maximumCalls: 1 << 30, maximumCallsPerHost: 1 << 30) : Scheduling(maximumCallsPerHost: 6)
        // A day's deadline: under valgrind the queue drains ~50 times slower, and the default minute would end
        // the last calls; the deadline is still watched for every call.
        let provider = NetworkProvider(scheduling: scheduling, configuration: configuration, deadline: 86_400)
        @Sendable func call(_ index: Int) async throws {
            let id = try await provider.request(ItemEndpoint(baseURL: base, index: index), as: User.self).id
            if id != 1 { throw SchedulingFailure.wrongUser(id) }
        }
        @Sendable func concurrently(_ indices: Range<Int>) async throws {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in indices { group.addTask { try await call(index) } }
                try await group.waitForAll()
            }
        }
        // The warm-up, in every run: first-time costs (metadata, queues, the limits' first wait) cancel out.
        try await concurrently(0..<64)
        for index in 0..<8 { try await call(index) }
        let before = statusKiB("VmRSS")
        if mode == "in-flight-sequential" {
            for index in 0..<count { try await call(index) }
        } else {
            try await concurrently(0..<count)
        }
        if mode.hasPrefix("in-flight-memory"), count > 0 {
            let growth = statusKiB("VmHWM") - before
            print(String(format: "in-flight-memory: %.2f KiB per call (peak RSS growth %d KiB for %d calls)", Double(growth) / Double(count), growth, count))
        }
        return true
    default:
        return false
    }
}
