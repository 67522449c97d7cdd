import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

/// A token store and refresh for two accounts: `token-<account>`, refreshed to `token-<account>-2`.
private func makeAuth(signedIn account: String?, refresh: (@Sendable () async -> Void)? = nil) -> AuthInterceptor {
    let credential = account.map { Credential(accessToken: "token-\($0)", refreshToken: "refresh-\($0)", account: $0) }
    return AuthInterceptor(baseURL: URL(string: "https://api.example.com/v1/")!, store: InMemoryCredentialStore(credential)) { credential, _ in
        await refresh?()
        return Credential(accessToken: credential.accessToken + "-2", refreshToken: credential.refreshToken, account: credential.account)
    }
}

private func credential(for account: String) -> Credential {
    Credential(accessToken: "token-\(account)", refreshToken: "refresh-\(account)", account: account)
}

/// A mutation bound to an account, sent straight through a provider (as the outbox sends it).
private struct BoundWrite: AccountBoundEndpoint {
    var baseURL = URL(string: "https://api.example.com/v1/notes")!
    var method: HTTPMethod = .post
    var boundAccount: String?
}

/// A mutation belongs to the account signed in when it was enqueued: it is sent with that account's token
/// or not at all, and a sign-out or switch holds or discards it as configured.
@Suite("Outbox: accounts, sign-out, refresh", SuiteTimeLimit.oneMinute)
struct OutboxAccountTests {
    let server = MockServer()
    let connectivity = ManualConnectivity(isOnline: false)

    /// The Authorization headers the server received on `path`.
    private func tokens(on path: String) -> [String?] {
        server.requests(.post, path).map { $0.header("Authorization") }
    }

    @Test("sign-out with pending mutations, hold: nothing is sent, the queue goes on; the account signs in again → sent with its token")
    func signOutHolds() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.post, "/v1/notes", .status(201))
        server.stub(.post, "/v1/public", .status(201))
        let auth = makeAuth(signedIn: "alice")
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity, interceptor: auth))
        let log = OutcomeLog(outbox)
        let held = try await outbox.enqueue(OutboxWrite.note(1, authenticated: true))
        #expect(held.account == "alice")
        try await auth.signOut()
        let marker = try await outbox.enqueue(OutboxWrite.note(2, path: "public"), group: "public")
        #expect(marker.account == nil)
        connectivity.set(online: true)
        await outbox.startDelivering()
        await log.wait { $0.delivered.count == 1 }   // the queue went past the held mutation
        #expect(log.delivered == [marker])
        #expect(server.requests(.post, "/v1/notes").isEmpty)
        #expect(await outbox.pending == [held])
        try await auth.signIn(with: credential(for: "alice"))
        await log.wait { $0.delivered.count == 2 }
        #expect(tokens(on: "/v1/notes") == ["Bearer token-alice"])
        await outbox.close()
    }

    @Test("nothing secret reaches the disk: the token an interceptor adds at send time is in no file of the outbox's folder")
    func noTokenOnDisk() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let auth = makeAuth(signedIn: "alice")
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity, interceptor: auth))
        let mutation = try await outbox.enqueue(OutboxWrite.note(1, authenticated: true))
        await outbox.close()
        let record = try Data(contentsOf: folder.appendingPathComponent("records/\(mutation.id).mutation"))
        #expect(record.range(of: Data("token-alice".utf8)) == nil)
        #expect(record.range(of: Data("Authorization".utf8)) == nil)
        #expect(record.range(of: Data(mutation.idempotencyKey.utf8)) != nil)
    }

    @Test("sign-out with pending mutations, discard: each is reported discarded (accountChanged) and never sent")
    func signOutDiscards() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.post, "/v1/notes", .status(201))
        let auth = makeAuth(signedIn: "alice")
        let outbox = try await Outbox(
            folder: folder, provider: server.makeProvider(connectivity: connectivity, interceptor: auth),
            configuration: outboxConfiguration(accountPolicy: .discard))
        let log = OutcomeLog(outbox)
        let first = try await outbox.enqueue(OutboxWrite.note(1, authenticated: true))
        let second = try await outbox.enqueue(OutboxWrite.note(2, authenticated: true), group: "other")
        await outbox.startDelivering()
        try await auth.signOut()
        await log.wait { $0.discarded.count == 2 }
        #expect(Set(log.discarded.map(\.0.id)) == [first.id, second.id])
        #expect(log.discarded.allSatisfy { $0.1 == .accountChanged })
        connectivity.set(online: true)
        try await auth.signIn(with: credential(for: "alice"))
        #expect(await outbox.pending.isEmpty)
        #expect(recordFiles(in: folder).isEmpty)
        #expect(server.requests.isEmpty)
        await outbox.close()
    }

    @Test("account switch: A's write is never sent with B's token; B's own writes go; A's goes with A's token when A is back")
    func accountSwitch() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.post, "/v1/notes", .status(201))
        server.stub(.post, "/v1/bob", .status(201))
        let auth = makeAuth(signedIn: "alice")
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity, interceptor: auth))
        let log = OutcomeLog(outbox)
        let alices = try await outbox.enqueue(OutboxWrite.note(1, authenticated: true))
        try await auth.signIn(with: credential(for: "bob"))
        let bobs = try await outbox.enqueue(OutboxWrite.note(2, path: "bob", authenticated: true))
        #expect(bobs.account == "bob")
        connectivity.set(online: true)
        await outbox.startDelivering()
        await log.wait { $0.delivered.count == 1 }
        #expect(log.delivered == [bobs])
        #expect(tokens(on: "/v1/bob") == ["Bearer token-bob"])
        #expect(server.requests(.post, "/v1/notes").isEmpty)
        try await auth.signIn(with: credential(for: "alice"))
        await log.wait { $0.delivered.count == 2 }
        #expect(log.delivered.last == alices)
        #expect(tokens(on: "/v1/notes") == ["Bearer token-alice"])
        await outbox.close()
    }

    @Test("the account check is where the token is attached: a bound call while another account is signed in throws accountChanged, nothing sent")
    func checkInsideAdapt() async throws {
        server.stub(.post, "/v1/notes", .status(201))
        let auth = makeAuth(signedIn: "bob")
        connectivity.set(online: true)
        let provider = server.makeProvider(connectivity: connectivity, interceptor: auth)
        await #expect(throws: OutboxError.accountChanged(expected: "alice")) { try await provider.response(BoundWrite(boundAccount: "alice")) }
        #expect(server.requests.isEmpty)
        _ = try await provider.response(BoundWrite(boundAccount: "bob"))
        #expect(tokens(on: "/v1/notes") == ["Bearer token-bob"])
    }

    @Test("a switch to B while A's token is being refreshed for A's write: the write is not sent with B's token")
    func switchDuringRefresh() async throws {
        let refreshing = Recorder<Int>()
        let gate = Recorder<Int>()
        let auth = makeAuth(signedIn: nil) {
            refreshing.append(1)
            await pollUntil { gate.count > 0 }
        }
        // alice's token expires now: the call refreshes it before sending (proactive refresh)
        try await auth.signIn(with: Credential(accessToken: "token-alice", refreshToken: "refresh-alice", expiresAt: Date(), account: "alice"))
        server.stub(.post, "/v1/notes", .status(201))
        connectivity.set(online: true)
        let provider = server.makeProvider(connectivity: connectivity, interceptor: auth)
        let call = Task { try await provider.response(BoundWrite(boundAccount: "alice")) }
        await pollUntil { refreshing.count == 1 }
        try await auth.signIn(with: credential(for: "bob"))
        gate.append(1)
        let result = await call.result
        #expect(throws: (any Error).self) { try result.get() }
        #expect(!tokens(on: "/v1/notes").contains("Bearer token-bob"))
        #expect(!tokens(on: "/v1/notes").contains("Bearer token-bob-2"))
    }

    @Test("a 401 during delivery refreshes the token and the mutation is delivered once, with the same key on both attempts")
    func refreshOn401() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.post, "/v1/notes") { request in
            request.header("Authorization") == "Bearer token-alice" ? .status(401) : .status(201)
        }
        let auth = makeAuth(signedIn: "alice")
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity, interceptor: auth))
        let log = OutcomeLog(outbox)
        let mutation = try await outbox.enqueue(OutboxWrite.note(1, authenticated: true))
        connectivity.set(online: true)
        await outbox.startDelivering()
        await log.wait { $0.delivered.count == 1 }
        #expect(tokens(on: "/v1/notes") == ["Bearer token-alice", "Bearer token-alice-2"])
        #expect(server.requests.map { $0.header("Idempotency-Key") } == [mutation.idempotencyKey, mutation.idempotencyKey])
        #expect(log.delivered == [mutation])
        #expect(log.failed.isEmpty)
        await outbox.close()
    }
}
