import Foundation
import Networking
import TestServer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Counts the waits in the queue that started; a test waits until so many did.
final class QueueWaits: EventMonitor, @unchecked Sendable {
    // @unchecked: `count` and `waiters` are guarded by `lock`.
    private let lock = NSLock()
    private var count = 0
    private var waiters: [(Int, CheckedContinuation<Void, Never>)] = []

    func queueWaitDidStart(origin: Origin, context: RequestContext) {
        lock.lock()
        count += 1
        let ready = waiters.filter { $0.0 <= count }
        waiters.removeAll { $0.0 <= count }
        lock.unlock()
        for (_, waiter) in ready { waiter.resume() }
    }

    func wait(for started: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if count >= started {
                lock.unlock()
                continuation.resume()
            } else {
                waiters.append((started, continuation))
                lock.unlock()
            }
        }
    }
}

/// Issue 33's queue over real TCP, crossed with coalescing, a stream and cancellation: the server counts what
/// reached it.
@Suite("Scheduling over TCP: the queue × coalescing × a stream × cancellation", .timeLimit(.minutes(1)))
struct SchedulingTCPTests {
    @Test(
        "behind one busy slot: a group whose every caller left while it waited never reaches the server, a live group is one request, a queued stream arrives whole"
    )
    func queueCrossedWithCoalescingStreamAndCancellation() async throws {
        try await withServer { server in
            // GIVEN one slot per host, held by a request the server keeps open
            let waits = QueueWaits()
            let provider = NetworkProvider(scheduling: Scheduling(maximumCallsPerHost: 1), configuration: .ephemeral, monitors: [waits])
            let control = NetworkProvider(configuration: .ephemeral)
            func call(_ path: String, _ method: HTTPMethod = .get) -> Call {
                Call(baseURL: server.baseURL, path: path, method: method, requiresAuthentication: false)
            }
            // The download is behind a token: the stream carries one the app signed in for.
            let tokens = try await control.request(call("/auth/sign-in", .post), as: Tokens.self)
            for key in ["live", "after"] { _ = try await control.response(call("/coalesce/\(key)/release", .post)) }
            func loads(_ key: String) async throws -> Int {
                try await control.request(call("/coalesce/\(key)/stats"), as: CoalesceStats.self).loads
            }
            let blocker = Task { try await provider.response(call("/coalesce/busy")) }
            while try await loads("busy") == 0 { try await Task.sleep(nanoseconds: 10_000_000) }   // it holds the slot

            // WHEN a group of 40 identical calls, a stream of 1 MiB, a group of 30 identical calls that are all
            // cancelled while they wait, and one more call queue behind it (one wait each: a group waits once)
            let live = (0..<40).map { _ in Task { try await provider.response(call("/coalesce/live")).statusCode } }
            await waits.wait(for: 1)
            let streamed = Task {
                var bytes = 0
                for try await chunk in try await provider.stream(
                    Call(
                        baseURL: server.baseURL, path: "/download", headers: ["Authorization": "Bearer \(tokens.accessToken)"],
                        queryItems: [URLQueryItem(name: "mb", value: "1")], requiresAuthentication: false),
                    interceptor: nil)
                { bytes += chunk.count }
                return bytes
            }
            await waits.wait(for: 2)
            let doomed = (0..<30).map { _ in Task { try await provider.response(call("/coalesce/doomed")).statusCode } }
            await waits.wait(for: 3)
            let after = Task { try await provider.response(call("/coalesce/after")).statusCode }
            await waits.wait(for: 4)
            for task in doomed { task.cancel() }
            _ = try await control.response(call("/coalesce/busy/release", .post))
            _ = try await blocker.value

            // THEN the cancelled callers end with `cancelled`, the others are answered in turn, and the group nobody
            // waited for any more left the queue without reaching the server (the call queued after it went)
            for task in doomed { await #expect(throws: NetworkError.cancelled) { try await task.value } }
            for task in live { #expect(try await task.value == 200) }
            #expect(try await streamed.value == 1_048_576)
            #expect(try await after.value == 200)
            #expect(try await loads("live") == 1)
            #expect(try await loads("doomed") == 0)
        }
    }
}
