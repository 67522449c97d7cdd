import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

private struct FailingStore: CredentialStore {
    struct Locked: Error {}
    func load() async throws -> Credential? { throw Locked() }
    func save(_ credential: Credential) async throws {}
    func delete() async throws {}
}

private func auth(_ store: any CredentialStore) -> AuthInterceptor {
    AuthInterceptor(baseURL: URL(string: "https://api.example.com/v1/")!, store: store) { credential, _ in credential }
}

private func cred(_ account: String) -> Credential {
    Credential(accessToken: "token-\(account)", refreshToken: "refresh-\(account)", account: account)
}

/// Polls up to ~`tries` ms; returns whether the condition held.
private func poll(_ tries: Int = 3_000, _ condition: @Sendable () async -> Bool) async -> Bool {
    for _ in 0..<tries {
        if await condition() { return true }
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
    return await condition()
}

@Suite("Outbox: the independent review's defects", SuiteTimeLimit.oneMinute)
struct ReviewOutboxTests {
    let server = MockServer()

    @Test("R1 a record skipped as damaged (newer payload version) keeps its body file: restored, it is delivered")
    func damagedRecordKeepsBody() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("photo.jpg")
        try Data(repeating: 7, count: 4_096).write(to: source)
        let box = folder.appendingPathComponent("box")
        let connectivity = ManualConnectivity(isOnline: false)
        let first = try await Outbox(folder: box, provider: server.makeProvider(connectivity: connectivity))
        let mutation = try await first.enqueue(OutboxWrite(path: "photo", body: .file(source, contentType: "image/jpeg")))
        await first.close()
        let recordURL = box.appendingPathComponent("records/\(mutation.id).mutation")
        let original = try Data(contentsOf: recordURL)
        guard case .success(let durable) = DurableRecord.decode(original, magic: OutboxRecord.magic) else {
            Issue.record("decode")
            return
        }
        try DurableRecord(payloadVersion: 99, payload: durable.payload).encoded(magic: OutboxRecord.magic)!.write(to: recordURL)
        let second = try await Outbox(folder: box, provider: server.makeProvider(connectivity: connectivity))
        #expect(await second.damaged.count == 1)
        await second.close()
        #expect(FileManager.default.fileExists(atPath: box.appendingPathComponent("bodies/\(mutation.id).body").path))
        try original.write(to: recordURL)   // the newer app version is back (or the read error is gone)
        let third = try await Outbox(folder: box, provider: server.makeProvider(connectivity: connectivity))
        #expect(await third.pending.map(\.id) == [mutation.id])
        #expect(await third.damaged.isEmpty)
        await third.close()
    }

    @Test("R2 discard policy: a credential store that cannot be read at launch does not discard the account's mutations")
    func unreadableStoreDoesNotDiscard() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.post, "/v1/notes", .status(201))
        server.stub(.post, "/v1/public", .status(201))
        let connectivity = ManualConnectivity(isOnline: true)
        let config = outboxConfiguration(accountPolicy: .discard)
        let first = try await Outbox(
            folder: folder, provider: server.makeProvider(connectivity: connectivity, interceptor: auth(InMemoryCredentialStore(cred("alice")))),
            configuration: config)
        let alices = try await first.enqueue(OutboxWrite.note(1, authenticated: true))
        #expect(alices.account == "alice")
        await first.close()
        // Relaunch while the Keychain is locked (errSecInteractionNotAllowed before first unlock).
        let second = try await Outbox(
            folder: folder, provider: server.makeProvider(connectivity: connectivity, interceptor: auth(FailingStore())), configuration: config)
        let log = OutcomeLog(second)
        let marker = try await second.enqueue(OutboxWrite.note(2, path: "public"), group: "public")
        await second.startDelivering()
        await log.wait { $0.delivered.contains(marker) }
        #expect(log.discarded.isEmpty)
        #expect(await second.pending.map(\.id) == [alices.id])
        await second.close()
    }

    @Test("R2 discard policy: a sign-in with another host's interceptor does not discard this interceptor's account")
    func otherInterceptorSignInDoesNotDiscard() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let api = auth(InMemoryCredentialStore(cred("alice")))
        let files = AuthInterceptor(baseURL: URL(string: "https://files.example.com/")!, store: InMemoryCredentialStore(nil)) { credential, _ in
            credential
        }
        let connectivity = ManualConnectivity(isOnline: false)
        let provider = server.makeProvider(connectivity: connectivity, interceptor: Interceptor(interceptors: [api, files]))
        let outbox = try await Outbox(folder: folder, provider: provider, configuration: outboxConfiguration(accountPolicy: .discard))
        let log = OutcomeLog(outbox)
        let alices = try await outbox.enqueue(OutboxWrite.note(1, authenticated: true))
        await outbox.startDelivering()
        try await files.signIn(with: cred("bob"))   // another host's account: alice is still signed in with `api`
        _ = await poll(300) { !log.discarded.isEmpty }
        #expect(log.discarded.isEmpty)
        #expect(await outbox.pending.map(\.id) == [alices.id])
        await outbox.close()
    }

    @Test("R3 a write enqueued while signed out is not sent later with the token of whoever signs in next")
    func signedOutWriteNotSentWithNextAccount() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.post, "/v1/notes", .status(201))
        let connectivity = ManualConnectivity(isOnline: true)
        let interceptor = auth(InMemoryCredentialStore(nil))
        let outbox = try await Outbox(
            folder: folder, provider: server.makeProvider(connectivity: connectivity, interceptor: interceptor), configuration: outboxConfiguration())
        let log = OutcomeLog(outbox)
        let mutation = try? await outbox.enqueue(OutboxWrite.note(1, authenticated: true))
        try await interceptor.signIn(with: cred("bob"))
        await outbox.startDelivering()
        _ = await poll(2_000) { !log.delivered.isEmpty }
        #expect(mutation == nil || mutation?.account != nil, "enqueued with no account: \(String(describing: mutation?.account))")
        #expect(!server.requests(.post, "/v1/notes").contains { $0.header("Authorization") == "Bearer token-bob" })
        await outbox.close()
    }

    @Test("R4 groups do not wait for each other: a slow write in group a does not hold group b")
    func groupsIndependent() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let gate = AsyncStream.makeStream(of: Void.self)
        server.stub(.post, "/v1/slow") { _ in
            for await _ in gate.stream {}
            return .status(201)
        }
        server.stub(.post, "/v1/notes", .status(201))
        let connectivity = ManualConnectivity(isOnline: true)
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity), configuration: outboxConfiguration())
        let log = OutcomeLog(outbox)
        try await outbox.enqueue(OutboxWrite.note(1, path: "slow"), group: "a")
        let b = try await outbox.enqueue(OutboxWrite.note(2), group: "b")
        await outbox.startDelivering()
        let went = await poll(3_000) { log.delivered.contains(b) }
        #expect(went, "group b waited for group a's slow write")
        gate.continuation.finish()
        await outbox.close()
    }

    @Test("R5 a record that cannot be read at send time does not let the next write of its group overtake it")
    func unreadableHeadKeepsOrder() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.post, "/v1/notes", .status(201))
        let connectivity = ManualConnectivity(isOnline: true)
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity), configuration: outboxConfiguration())
        let log = OutcomeLog(outbox)
        var large = ["n": 1]   // larger than an outbox keeps in memory: read from disk when sent
        for index in 0..<2_000 { large["padding\(index)"] = index }
        let first = try await outbox.enqueue(OutboxWrite(body: .json(large)), group: "g")
        try await outbox.enqueue(OutboxWrite.note(2), group: "g")
        let path = folder.appendingPathComponent("records/\(first.id).mutation").path
        try FileManager.default.moveItem(atPath: path, toPath: path + ".aside")   // an EIO/EMFILE/locked-file read
        await outbox.startDelivering()
        _ = await poll(2_000) { !log.damaged.isEmpty || !log.delivered.isEmpty }
        _ = await poll(300) { false }
        #expect(notesReceived(by: server) == [], "2 overtook 1: \(notesReceived(by: server))")
        await outbox.close()
        try FileManager.default.moveItem(atPath: path + ".aside", toPath: path)
        let again = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity), configuration: outboxConfiguration())
        let log2 = OutcomeLog(again)
        await again.startDelivering()
        _ = await poll(3_000) { !log2.delivered.isEmpty }
        #expect(notesReceived(by: server).first == 1, "order on the server: \(notesReceived(by: server))")
        await again.close()
    }

    @Test("R6 a discard racing a retry: once discard returned, the record is gone from disk and from pending")
    func discardRacingRetry() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.post, "/v1/notes", .status(400))
        let connectivity = ManualConnectivity(isOnline: false)
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity), configuration: outboxConfiguration())
        let log = OutcomeLog(outbox)
        var failures = 0
        for n in 1...20 {
            let m = try await outbox.enqueue(OutboxWrite.note(n), group: "g\(n)")
            if n == 1 { await outbox.startDelivering() }
            connectivity.set(online: true)
            await log.wait { $0.failed.contains { $0.0.id == m.id } }
            connectivity.set(online: false)
            async let retried: Void = outbox.retry(m.id)
            async let discarded: Void = outbox.discard(m.id)
            _ = try? await retried
            if (try? await discarded) != nil {
                let onDisk = FileManager.default.fileExists(atPath: folder.appendingPathComponent("records/\(m.id).mutation").path)
                let listed = await (outbox.pending + outbox.failed).contains { $0.id == m.id }
                if onDisk || listed { failures += 1 }
            }
        }
        #expect(failures == 0, "\(failures) of 20 discarded mutations came back (on disk or in pending)")
        await outbox.close()
    }

    @Test("R7 a closed outbox does not touch the folder its successor owns: discard after close throws closed")
    func closedOutboxKeepsOff() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let connectivity = ManualConnectivity(isOnline: false)
        let first = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity), configuration: outboxConfiguration())
        let m = try await first.enqueue(OutboxWrite.note(1))
        await first.close()
        let second = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity), configuration: outboxConfiguration())
        await #expect(throws: OutboxError.closed) { try await first.discard(m.id) }
        #expect(recordFiles(in: folder).count == 1, "the successor's record was deleted by the closed outbox")
        #expect(await second.pending.map(\.id) == [m.id])
        await second.close()
    }

    @Test("R8 a password in the URL's userinfo never reaches the disk")
    func userinfoNotOnDisk() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let outbox = try await Outbox(
            folder: folder, provider: server.makeProvider(connectivity: ManualConnectivity(isOnline: false)), configuration: outboxConfiguration())
        var write = OutboxWrite.note(1)
        write.baseURL = URL(string: "https://user:hunter2secret@api.example.com/v1/")!
        let m = try? await outbox.enqueue(write)
        await outbox.close()
        if let m {
            let record = try Data(contentsOf: folder.appendingPathComponent("records/\(m.id).mutation"))
            #expect(record.range(of: Data("hunter2secret".utf8)) == nil)
        }
    }

    @Test("R9 (lead's decision: outcomes are not durable) outcomes nobody hears are bounded: the last 100 kept, the older counted")
    func unheardOutcomesBounded() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.post, "/v1/notes", .status(201))
        let connectivity = ManualConnectivity(isOnline: true)
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity), configuration: outboxConfiguration())
        for n in 1...130 { try await outbox.enqueue(OutboxWrite.note(n), group: "g\(n % 7)") }
        await outbox.startDelivering()
        await pollUntil { recordFiles(in: folder).isEmpty }   // all delivered; nobody listened
        _ = await poll(200) { await outbox.pending.isEmpty }
        let log = OutcomeLog(outbox)
        await log.wait { $0.delivered.count == 100 }
        guard case .outcomesDropped(let count)? = log.all.first else {
            Issue.record("the first outcome is not the count of those dropped: \(String(describing: log.all.first))")
            return
        }
        #expect(count == 30)
        #expect(log.all.count == 101)
        await outbox.close()
    }

    @Test("R10 discarding a group's head while it pauses after a transient failure lets the next one go")
    func discardPausedHeadWakes() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.post, "/v1/flaky", .status(503))
        server.stub(.post, "/v1/notes", .status(201))
        let connectivity = ManualConnectivity(isOnline: true)
        let outbox = try await Outbox(
            folder: folder, provider: server.makeProvider(connectivity: connectivity, maximumAttempts: 1), configuration: outboxConfiguration())
        let log = OutcomeLog(outbox)
        let head = try await outbox.enqueue(OutboxWrite.note(1, path: "flaky"), group: "g")
        let next = try await outbox.enqueue(OutboxWrite.note(2), group: "g")
        await outbox.startDelivering()
        await pollUntil { !self.server.requests(.post, "/v1/flaky").isEmpty }
        _ = await poll(200) { false }   // let it settle into its pause
        try await outbox.discard(head.id)
        let went = await poll(3_000) { log.delivered.contains(next) }
        #expect(went, "the group stalled behind a discarded head")
        await outbox.close()
    }
}
