import Foundation
import Networking
import TestServer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `/coalesce/{key}/stats`'s body.
struct CoalesceStats: Decodable, Equatable, Sendable {
    let loads: Int
}

/// Counts the calls that joined another; a test waits until so many did.
final class Joins: EventMonitor, @unchecked Sendable {
    // @unchecked: `count` and `waiters` are guarded by `lock`.
    private let lock = NSLock()
    private var count = 0
    private var waiters: [(Int, CheckedContinuation<Void, Never>)] = []

    func callDidJoin(_ request: URLRequest, context: RequestContext) {
        lock.lock()
        count += 1
        let ready = waiters.filter { $0.0 <= count }
        waiters.removeAll { $0.0 <= count }
        lock.unlock()
        for (_, waiter) in ready { waiter.resume() }
    }

    func wait(for joined: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if count >= joined {
                lock.unlock()
                continuation.resume()
            } else {
                waiters.append((joined, continuation))
                lock.unlock()
            }
        }
    }
}

/// Identical concurrent GETs share one exchange over real TCP (issue 33): the server counts them.
@Suite("Coalescing over TCP", .timeLimit(.minutes(1)))
struct CoalescingTCPTests {
    @Test("200 concurrent identical GETs reach the server as one request, and each caller gets the answer")
    func twoHundredCallsOneRequest() async throws {
        try await withServer { server in
            // GIVEN a document the server holds until released
            let joins = Joins()
            let provider = NetworkProvider(configuration: .ephemeral, monitors: [joins])
            let document = Call(baseURL: server.baseURL, path: "/coalesce/two-hundred", requiresAuthentication: false)
            // WHEN 200 callers ask for it at once, and it is released once 199 joined the first
            let calls = (0..<200).map { _ in Task { try await provider.response(document) } }
            await joins.wait(for: 199)
            let control = NetworkProvider(configuration: .ephemeral)
            _ = try await control.response(Call(baseURL: server.baseURL, path: "/coalesce/two-hundred/release", method: .post, requiresAuthentication: false))
            // THEN every caller got the document, and the server received one request
            for call in calls { #expect(try await call.value.statusCode == 200) }
            let stats = try await control.request(
                Call(baseURL: server.baseURL, path: "/coalesce/two-hundred/stats", requiresAuthentication: false), as: CoalesceStats.self)
            #expect(stats == CoalesceStats(loads: 1))
        }
    }

    @Test("with coalescing turned off, each of 20 identical GETs is a request of its own")
    func turnedOffEachCallIsARequest() async throws {
        try await withServer { server in
            let control = NetworkProvider(configuration: .ephemeral)
            _ = try await control.response(Call(baseURL: server.baseURL, path: "/coalesce/off/release", method: .post, requiresAuthentication: false))
            let provider = NetworkProvider(scheduling: Scheduling(coalescesIdenticalCalls: false), configuration: .ephemeral)
            let document = Call(baseURL: server.baseURL, path: "/coalesce/off", requiresAuthentication: false)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 { group.addTask { _ = try await provider.response(document) } }
                try await group.waitForAll()
            }
            let stats = try await control.request(
                Call(baseURL: server.baseURL, path: "/coalesce/off/stats", requiresAuthentication: false), as: CoalesceStats.self)
            #expect(stats == CoalesceStats(loads: 20))
        }
    }
}
