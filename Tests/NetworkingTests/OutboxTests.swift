import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

/// The outbox's core promises: persisted before `enqueue` returns, sent with its idempotency key when the
/// network allows, in order within a group, failed-for-good kept aside, bounded, refused when unsafe.
@Suite("Outbox: delivery, order, failures, bounds", SuiteTimeLimit.oneMinute)
struct OutboxTests {
    let server = MockServer()
    let connectivity = ManualConnectivity(isOnline: false)

    @Test("enqueue persists before it returns; online, the mutation is sent once with its Idempotency-Key and its record goes")
    func deliversWithKey() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.post, "/v1/notes", .status(201))
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        let log = OutcomeLog(outbox)
        let mutation = try await outbox.enqueue(OutboxWrite.note(1))
        #expect(recordFiles(in: folder) == ["\(mutation.id).mutation"])   // on disk when enqueue returned
        #expect(await outbox.pending == [mutation])
        connectivity.set(online: true)
        await outbox.startDelivering()
        await log.wait { $0.delivered.count == 1 }
        let sent = server.requests(.post, "/v1/notes")
        #expect(sent.count == 1)
        #expect(sent.first?.header("Idempotency-Key") == mutation.idempotencyKey)
        #expect(notesReceived(by: server) == [1])
        #expect(log.delivered == [mutation])
        #expect(await outbox.pending.isEmpty)
        await outbox.close()   // its files go once the outbox is idle, and at the latest when it closes
        #expect(recordFiles(in: folder).isEmpty)
        #expect(deliveredLog(in: folder).isEmpty)
    }

    @Test("offline → online: nothing is sent while offline (the outbox waits on the connectivity), then everything, in order")
    func offlineThenOnline() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.post, "/v1/notes", .status(201))
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        let log = OutcomeLog(outbox)
        await outbox.startDelivering()
        for n in 1...3 { try await outbox.enqueue(OutboxWrite.note(n)) }
        await pollUntil { [connectivity] in connectivity.waitingCount == 1 }
        #expect(server.requests.isEmpty)
        connectivity.set(online: true)
        await log.wait { $0.delivered.count == 3 }
        #expect(notesReceived(by: server) == [1, 2, 3])
        await outbox.close()
    }

    @Test("enqueue while full throws .full and drops nothing: the count bound and the byte bound")
    func bounded() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let outbox = try await Outbox(
            folder: folder, provider: server.makeProvider(connectivity: connectivity), configuration: outboxConfiguration(maximumCount: 2))
        let first = try await outbox.enqueue(OutboxWrite.note(1))
        let second = try await outbox.enqueue(OutboxWrite.note(2))
        await #expect(throws: OutboxError.full(count: 2, bytes: first.size + second.size)) { try await outbox.enqueue(OutboxWrite.note(3)) }
        #expect(await outbox.pending == [first, second])
        #expect(recordFiles(in: folder).count == 2)
        await outbox.close()

        let small = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: small) }
        let bytes = try await Outbox(
            folder: small, provider: server.makeProvider(connectivity: connectivity), configuration: outboxConfiguration(maximumBytes: 4_000))
        try await bytes.enqueue(OutboxWrite.note(1))
        let large = OutboxWrite(body: .data(Data(repeating: 1, count: 5_000), contentType: "application/octet-stream"))
        await #expect {
            try await bytes.enqueue(large)
        } throws: { error in
            if case OutboxError.full = error { return true }
            return false
        }
        #expect(await bytes.pending.count == 1)
        #expect(recordFiles(in: small).count == 1)
        await bytes.close()
    }

    @Test("refused at enqueue, nothing written: a safe method (RFC 9110 §9.2.1), a secret header or query value, a missing body file")
    func refusesUnsafeSnapshots() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        await #expect(throws: OutboxError.notAMutation(.get)) { try await outbox.enqueue(OutboxWrite(method: .get, body: .none)) }
        await #expect(throws: OutboxError.containsSecret(name: "Authorization")) {
            try await outbox.enqueue(OutboxWrite(headers: ["Authorization": "Bearer secret-token"]))
        }
        await #expect(throws: OutboxError.containsSecret(name: "X-Amz-Signature")) {
            try await outbox.enqueue(OutboxWrite(queryItems: [URLQueryItem(name: "X-Amz-Signature", value: "abc")]))
        }
        let missing = folder.appendingPathComponent("missing.jpg")
        await #expect {
            try await outbox.enqueue(OutboxWrite(body: .file(missing, contentType: "image/jpeg")))
        } throws: { error in
            if case OutboxError.invalidMutation = error { return true }
            return false
        }
        #expect(recordFiles(in: folder).isEmpty)
        await outbox.close()
    }

    @Test("the endpoint's own Idempotency-Key is the mutation's key, sent as it was set")
    func keepsTheEndpointsKey() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.post, "/v1/notes", .status(201))
        connectivity.set(online: true)
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        let log = OutcomeLog(outbox)
        let mutation = try await outbox.enqueue(OutboxWrite(headers: ["Idempotency-Key": "app-key-1"]))
        #expect(mutation.idempotencyKey == "app-key-1")
        await outbox.startDelivering()
        await log.wait { $0.delivered.count == 1 }
        #expect(server.requests.first?.header("Idempotency-Key") == "app-key-1")
        await outbox.close()
    }

    @Test("in order within a group; a group whose head pauses after a transient 503 does not hold another group back")
    func orderAndGroups() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let failedOnce = Recorder<Int>()
        server.stub(.post, "/v1/a") { _ in
            failedOnce.append(1)
            return failedOnce.count == 1 ? .status(503) : .status(201)
        }
        server.stub(.post, "/v1/b", .status(201))
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity), configuration: outboxConfiguration())
        let log = OutcomeLog(outbox)
        let a1 = try await outbox.enqueue(OutboxWrite.note(1, path: "a"), group: "a")
        let a2 = try await outbox.enqueue(OutboxWrite.note(2, path: "a"), group: "a")
        let b1 = try await outbox.enqueue(OutboxWrite.note(3, path: "b"), group: "b")
        let b2 = try await outbox.enqueue(OutboxWrite.note(4, path: "b"), group: "b")
        connectivity.set(online: true)
        await outbox.startDelivering()
        await log.wait { $0.delivered.count == 2 }
        // a1 failed transiently and pauses (until retried here): a2 waits behind it; b goes on
        #expect(log.delivered == [b1, b2])
        #expect(notesReceived(by: server, path: "/v1/a") == [1])
        #expect(await outbox.pending == [a1, a2])
        try await outbox.retry(a1.id)
        await log.wait { $0.delivered.count == 4 }
        #expect(log.delivered == [b1, b2, a1, a2])
        #expect(notesReceived(by: server, path: "/v1/a") == [1, 1, 2])
        let keys = server.requests(.post, "/v1/a").map { $0.header("Idempotency-Key") }
        #expect(keys == [a1.idempotencyKey, a1.idempotencyKey, a2.idempotencyKey])   // the same key on the retry
        await outbox.close()
    }

    @Test("failed for good (422, RFC 9110 §15.5.21) moves aside without blocking its group; retry delivers it, discard removes it")
    func failedForGood() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let accepts = Recorder<Int>()
        server.stub(.post, "/v1/notes") { request in
            let n = (try? request.decodeBody(as: [String: Int].self)["n"]) ?? 0
            return n == 1 && accepts.count == 0 || n == 2 ? .status(422) : .status(201)
        }
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity), configuration: outboxConfiguration())
        let log = OutcomeLog(outbox)
        let first = try await outbox.enqueue(OutboxWrite.note(1))
        let second = try await outbox.enqueue(OutboxWrite.note(2))
        let third = try await outbox.enqueue(OutboxWrite.note(3))
        connectivity.set(online: true)
        await outbox.startDelivering()
        await log.wait { $0.failed.count == 2 && $0.delivered.count == 1 }
        #expect(log.delivered == [third])
        #expect(log.failed.map(\.0.id) == [first.id, second.id])
        #expect(await outbox.failed.map(\.id) == [first.id, second.id])
        #expect(await outbox.failed.first?.failure?.contains("422") == true)
        #expect(await outbox.pending.isEmpty)
        accepts.append(1)
        try await outbox.retry(first.id)
        await log.wait { $0.delivered.count == 2 }
        #expect(log.delivered.last?.id == first.id)
        try await outbox.discard(second.id)
        await log.wait { $0.discarded.count == 1 }
        #expect(log.discarded.map(\.0.id) == [second.id])
        #expect(log.discarded.first?.1 == .requested)
        #expect(await outbox.failed.isEmpty)
        #expect(recordFiles(in: folder).isEmpty)
        await #expect(throws: OutboxError.unknownMutation(second.id)) { try await outbox.discard(second.id) }
        await outbox.close()
    }

    @Test("hundreds of concurrent enqueues: each persisted once, unique keys, delivered in sequence order")
    func concurrentEnqueues() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.post, "/v1/notes", .status(201))
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        let log = OutcomeLog(outbox)
        await outbox.startDelivering()
        let mutations = try await withThrowingTaskGroup(of: OutboxMutation.self) { group in
            for n in 0..<300 { group.addTask { try await outbox.enqueue(OutboxWrite.note(n)) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(mutations.map(\.idempotencyKey)).count == 300)
        #expect(Set(mutations.map(\.sequence)).count == 300)
        #expect(recordFiles(in: folder).count == 300)
        connectivity.set(online: true)
        await log.wait { $0.delivered.count == 300 }
        let bySequence = Dictionary(uniqueKeysWithValues: mutations.map { ($0.idempotencyKey, $0.sequence) })
        let sentOrder = server.requests(.post, "/v1/notes").compactMap { $0.header("Idempotency-Key").flatMap { bySequence[$0] } }
        #expect(sentOrder == sentOrder.sorted())
        #expect(sentOrder.count == 300)
        await outbox.close()
    }
}
