import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

/// What survives: a relaunch (a second outbox on the folder resends what was not acknowledged, with the
/// same keys), a corrupted record (skipped and reported, its neighbours delivered), a body file whose source
/// is gone, a close while a mutation is in flight, and a second outbox on a folder in use (refused).
@Suite("Outbox: restarts, damaged records, copied bodies, one owner", SuiteTimeLimit.oneMinute)
struct OutboxDurabilityTests {
    let server = MockServer()
    let connectivity = ManualConnectivity(isOnline: false)

    @Test("a second outbox on the folder after close resends every mutation not acknowledged, with the same keys, in order")
    func restartResends() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.post, "/v1/notes", .status(201))
        let first = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        var enqueued: [OutboxMutation] = []
        for n in 1...3 { enqueued.append(try await first.enqueue(OutboxWrite.note(n), group: "g")) }
        await first.close()
        await #expect(throws: OutboxError.closed) { try await first.enqueue(OutboxWrite.note(4)) }

        let second = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        let log = OutcomeLog(second)
        #expect(await second.pending == enqueued)
        #expect(await second.pending.map(\.idempotencyKey) == enqueued.map(\.idempotencyKey))
        let fourth = try await second.enqueue(OutboxWrite.note(4), group: "g")
        #expect(fourth.sequence > enqueued[2].sequence)
        connectivity.set(online: true)
        await second.startDelivering()
        await log.wait { $0.delivered.count == 4 }
        #expect(notesReceived(by: server) == [1, 2, 3, 4])
        #expect(server.requests.map { $0.header("Idempotency-Key") } == (enqueued + [fourth]).map(\.idempotencyKey))
        await second.close()
    }

    @Test("two outboxes on one folder: the second is refused with folderInUse until the first closes")
    func oneOwner() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let provider = server.makeProvider(connectivity: connectivity)
        let first = try await Outbox(folder: folder, provider: provider)
        await #expect(throws: OutboxError.folderInUse(folder)) { try await Outbox(folder: folder, provider: provider) }
        await first.close()
        let second = try await Outbox(folder: folder, provider: provider)
        await second.close()
    }

    @Test("a flipped byte and a torn record are skipped and reported (outcome and damaged list); the records around them are delivered")
    func damagedRecords() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.post, "/v1/notes", .status(201))
        let first = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        var enqueued: [OutboxMutation] = []
        for n in 1...4 { enqueued.append(try await first.enqueue(OutboxWrite.note(n))) }
        await first.close()
        let records = folder.appendingPathComponent("records")
        let flipped = records.appendingPathComponent("\(enqueued[1].id).mutation")
        var bytes = try Data(contentsOf: flipped)
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: flipped)
        let torn = records.appendingPathComponent("\(enqueued[2].id).mutation")
        try Data(try Data(contentsOf: torn).prefix(30)).write(to: torn)

        let second = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        let log = OutcomeLog(second)   // made after open: the damaged records were kept for it
        await log.wait { $0.damaged.count == 2 }
        #expect(Set(log.damaged.map(\.name)) == [enqueued[1].id.rawValue, enqueued[2].id.rawValue])
        #expect(await second.damaged.map(\.name).sorted() == [enqueued[1].id.rawValue, enqueued[2].id.rawValue].sorted())
        #expect(await second.pending == [enqueued[0], enqueued[3]])
        connectivity.set(online: true)
        await second.startDelivering()
        await log.wait { $0.delivered.count == 2 }
        #expect(notesReceived(by: server) == [1, 4])
        for damaged in await second.damaged { try await second.removeDamaged(damaged) }
        #expect(await second.damaged.isEmpty)
        #expect(recordFiles(in: folder).isEmpty)
        await second.close()
    }

    @Test("a file body and a multipart form are copied at enqueue: delivered whole after their sources were deleted")
    func copiedBodies() async throws {
        let folder = try makeScratchFolder()
        let sources = try makeScratchFolder()
        defer {
            try? FileManager.default.removeItem(at: folder)
            try? FileManager.default.removeItem(at: sources)
        }
        server.stub(.post, "/v1/photo", .status(201))
        server.stub(.post, "/v1/form", .status(201))
        let photo = sources.appendingPathComponent("photo.jpg")
        let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try bytes.write(to: photo)
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        let log = OutcomeLog(outbox)
        try await outbox.enqueue(OutboxWrite(path: "photo", body: .file(photo, contentType: "image/jpeg")))
        try await outbox.enqueue(OutboxWrite(path: "form", body: .multipart(MultipartForm([.text("title", "sea"), .file("photo", at: photo)]))))
        try FileManager.default.removeItem(at: photo)
        connectivity.set(online: true)
        await outbox.startDelivering()
        await log.wait { $0.delivered.count == 2 }
        let upload = try #require(server.requests(.post, "/v1/photo").first)
        #expect(upload.body == bytes)
        #expect(upload.header("Content-Type") == "image/jpeg")
        let form = try #require(server.requests(.post, "/v1/form").first)
        #expect(form.header("Content-Type")?.hasPrefix("multipart/form-data; boundary=") == true)
        #expect(form.body.range(of: bytes) != nil)
        #expect(form.body.range(of: Data("sea".utf8)) != nil)
        await outbox.close()   // the copies go once the outbox is idle, and at the latest when it closes
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("bodies").path)
        #expect(left.isEmpty)
    }

    @Test("close while a mutation is in flight cancels it; it stays on disk and the next outbox sends it with the same key")
    func closeWhileDelivering() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let calls = Recorder<Int>()
        server.stub(.post, "/v1/notes") { _ in
            calls.append(1)
            return calls.count == 1 ? MockResponse.status(201).delayed(by: .infinity) : .status(201)
        }
        connectivity.set(online: true)
        let first = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        let mutation = try await first.enqueue(OutboxWrite.note(1))
        await first.startDelivering()
        await pollUntil { calls.count == 1 }
        await first.close()   // returns: the send was cancelled
        #expect(recordFiles(in: folder) == ["\(mutation.id).mutation"])

        let second = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        let log = OutcomeLog(second)
        await second.startDelivering()
        await log.wait { $0.delivered.count == 1 }
        #expect(server.requests.map { $0.header("Idempotency-Key") } == [mutation.idempotencyKey, mutation.idempotencyKey])
        await second.close()
        #expect(recordFiles(in: folder).isEmpty)
    }
}
