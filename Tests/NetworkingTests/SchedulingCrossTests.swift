import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 33's rules where they meet the other features: coalesced calls, distinct calls and uploads that are
/// redirected, all queued behind one slot per host, with an expired token (one refresh for everyone, RFC 9110
/// §15.5.2), and callers cancelled while they wait.
@Suite("Scheduling across features: queue × coalescing × upload × redirect × refresh × cancellation", SuiteTimeLimit.threeMinutes)
struct SchedulingCrossTests {
    /// A `POST` of `body` to `/v1/upload`, which the API redirects with 307 (RFC 9110 §15.4.8: the method and
    /// body are sent again) to `/v1/stored`.
    struct Upload: Endpoint {
        let baseURL: URL
        let body: RequestBody
        var path: String { "upload" }
        var method: HTTPMethod { .post }
    }

    /// What `/v1/stored` received: the body and its token, per request.
    final class Stored: @unchecked Sendable {
        // @unchecked: `bodies` is guarded by `lock`.
        private let lock = NSLock()
        private var bodies: [Data] = []
        func append(_ body: Data) {
            lock.lock()
            bodies.append(body)
            lock.unlock()
        }
        var all: [Data] {
            lock.lock()
            defer { lock.unlock() }
            return bodies
        }
    }

    @Test(
        "everything queued behind one busy slot: one refresh, shared exchanges for identical calls, uploads redirected whole, cancelled callers end alone, no slot left"
    )
    func everythingAtOnce() async throws {
        // GIVEN an expired token, one slot per host held by a call the server keeps open, and an upload route that
        // answers 401 to the expired token and 307 to a valid one
        let api = MockAuthServer()
        let held = HeldAnswers()
        held.stub(api.mock, "/v1/held")
        let stored = Stored()
        let target = api.baseURL.appendingPathComponent("stored")
        api.mock.stub(.post, api.baseURL.appendingPathComponent("upload").path) { request in
            request.header("Authorization") == "Bearer access-0" ? .status(401) : .status(307, headers: ["Location": target.absoluteString])
        }
        api.mock.stub(.post, target.path) { request in
            guard request.header("Authorization") != "Bearer access-0" else { return .status(401) }
            stored.append(request.body)
            return .status(201)
        }
        // An account: calls authenticated for no known account never share (two users never share one answer).
        let credential = Credential(accessToken: "access-0", refreshToken: "refresh-0", account: "ana")
        let auth = api.makeInterceptor(store: InMemoryCredentialStore(credential))
        let provider = NetworkProvider(
            scheduling: Scheduling(maximumCallsPerHost: 1), configuration: api.mock.makeConfiguration(basedOn: .ephemeral),
            interceptor: Interceptor(adapters: [auth], retriers: [auth]))
        let blocker = Task { try await provider.response(ScheduledCall("held")) }
        _ = try await api.mock.nextRequest(matching: .get, "/v1/held")

        // WHEN 150 identical GETs, 20 more identical GETs of another resource, 50 distinct GETs and 5 uploads of
        // 64 KiB each queue behind it, 30 of the first identical callers and all 20 others are cancelled while
        // they wait, and the slot is then freed
        let payloads = (0..<5).map { index in Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }) }
        let identical = (0..<150).map { _ in Task { try await provider.response(api.resource("/items/shared")).statusCode } }
        let doomed = (0..<20).map { _ in Task { try await provider.response(api.resource("/items/doomed")).statusCode } }
        let distinct = (0..<50).map { index in Task { try await provider.response(api.resource("/items/\(index)")).statusCode } }
        let uploads = payloads.map { payload in
            Task {
                try await provider.response(Upload(baseURL: api.baseURL, body: .data(payload, contentType: "application/octet-stream"))).statusCode
            }
        }
        await pollUntil { provider.slots.waitingCount >= 50 }   // at least the distinct calls and the uploads' first sends
        let cancelled = Array(identical.prefix(30))
        for task in cancelled + doomed { task.cancel() }
        held.release()
        _ = try await blocker.value

        // THEN the cancelled callers end with `cancelled` (or had their answer already), every other call is
        // answered, one refresh served all, the uploads arrived whole after their redirect, and no slot is left
        var cancelledCount = 0
        for task in cancelled {
            do {
                #expect(try await task.value == 200)
            } catch let error as NetworkError {
                #expect(error == .cancelled)
                cancelledCount += 1
            }
        }
        for task in doomed { await #expect(throws: NetworkError.cancelled) { try await task.value } }
        for task in identical.dropFirst(30) { #expect(try await task.value == 200) }
        for task in distinct { #expect(try await task.value == 200) }
        for task in uploads { #expect(try await task.value == 201) }
        #expect(cancelledCount > 0)
        #expect(api.refreshCount == 1)
        #expect(Set(stored.all) == Set(payloads) && stored.all.count == payloads.count)
        // Identical calls shared their exchanges: far fewer requests than callers reached the server.
        #expect(api.mock.requests(.get, "/v1/items/shared").count < 20)
        // A shared exchange whose every caller left while it waited left the queue: never sent.
        #expect(api.mock.requests(.get, "/v1/items/doomed").isEmpty)
        #expect(provider.slots.inFlightCount == 0 && provider.slots.waitingCount == 0)
    }
}
