import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

/// The delivered log: a delivery is acknowledged on disk by one short append before it is reported, and its
/// files are removed later (idle, closing). What a process killed in between leaves must never be sent again,
/// and a torn or corrupted entry must never lose a mutation.
@Suite("Outbox: the delivered log", SuiteTimeLimit.oneMinute)
struct OutboxDeliveredLogTests {
    let server = MockServer()
    let connectivity = ManualConnectivity(isOnline: false)

    @Test("an entry reads back as its name; a torn, corrupted or foreign line reads as nothing")
    func entries() throws {
        let name = "3f2a7c9e-0b1d-4e5f-8a6b-7c8d9e0f1a2b"
        let line = OutboxDeliveredLog.line(name)
        #expect(line.count == name.utf8.count + 10)
        #expect(line.last == UInt8(ascii: "\n"))
        let entry = Data(line.dropLast())
        #expect(OutboxDeliveredLog.name(in: entry[...]) == name)
        #expect(OutboxDeliveredLog.name(in: entry.dropLast(3)) == nil)   // torn
        var flipped = entry
        flipped[3] ^= 0x01   // the name changed, the checksum did not
        #expect(OutboxDeliveredLog.name(in: flipped[...]) == nil)
        #expect(OutboxDeliveredLog.name(in: Data("../records/x 00000000".utf8)[...]) == nil)
        #expect(OutboxDeliveredLog.name(in: Data([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])[...]) == nil)
    }

    @Test("replacing the log keeps only the names given (appends go on in the new file); none empties it")
    func replace() throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = OutboxDeliveredLog(path: folder.appendingPathComponent("delivered.log").path)
        defer { log.close() }
        for name in ["a", "b", "c"] { try log.append(name) }
        #expect(log.names() == ["a", "b", "c"])
        try log.replace(with: ["c"])
        try log.append("d")
        #expect(log.names() == ["c", "d"])
        #expect(!FileManager.default.fileExists(atPath: log.replacementPath))
        try log.replace(with: [])
        #expect(log.names().isEmpty)
        try log.append("e")
        #expect(log.names() == ["e"])
    }

    @Test("delivered, then killed before its files were removed: the next outbox does not send it again")
    func acknowledgedBeforeReported() async throws {
        let folder = try makeScratchFolder()
        let copy = try makeScratchFolder()
        defer {
            try? FileManager.default.removeItem(at: folder)
            try? FileManager.default.removeItem(at: copy)
        }
        // The second group's request never ends: the outbox is never idle, so nothing removes the first's files.
        server.stub(.post, "/v1/notes", .status(201))
        server.stub(.post, "/v1/slow", MockResponse.status(201).delayed(by: .infinity))
        connectivity.set(online: true)
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        let log = OutcomeLog(outbox)
        let slow = try await outbox.enqueue(OutboxWrite.note(2, path: "slow"), group: "slow")
        let delivered = try await outbox.enqueue(OutboxWrite.note(1), group: "notes")
        await outbox.startDelivering()
        await log.wait { $0.delivered.count == 1 }
        await pollUntil { server.requests(.post, "/v1/slow").count == 1 }
        // What a kill at this instant leaves: the delivered record still on disk, named in the log.
        try FileManager.default.removeItem(at: copy)
        try FileManager.default.copyItem(at: folder, to: copy)
        await outbox.close()
        #expect(recordFiles(in: copy).contains("\(delivered.id).mutation"))
        #expect(deliveredLog(in: copy).count == 1)

        let next = MockServer()
        next.stub(.post, "/v1/notes", .status(201))
        next.stub(.post, "/v1/slow", .status(201))
        let reopened = try await Outbox(folder: copy, provider: next.makeProvider(connectivity: connectivity))
        #expect(await reopened.pending == [slow])
        #expect(!recordFiles(in: copy).contains("\(delivered.id).mutation"))
        #expect(deliveredLog(in: copy).isEmpty)   // its entries' files are gone: emptied
        let relog = OutcomeLog(reopened)
        await reopened.startDelivering()
        await relog.wait { $0.delivered.contains { $0.id == slow.id } }
        #expect(next.requests.map { $0.header("Idempotency-Key") } == [slow.idempotencyKey])
        await reopened.close()
    }

    @Test("a torn or corrupted entry is ignored: its mutation stays pending and is sent again with its key")
    func damagedEntries() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        var mutations: [OutboxMutation] = []
        for n in 1...4 { mutations.append(try await outbox.enqueue(OutboxWrite.note(n))) }
        await outbox.close()
        var corrupted = OutboxDeliveredLog.line(mutations[2].id.rawValue)
        corrupted[corrupted.count - 2] = corrupted[corrupted.count - 2] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        var log = Data(OutboxDeliveredLog.line(mutations[0].id.rawValue))
        log.append(Data([0xFF, 0xFE, 0x00, 0x0A]))   // garbage
        log.append(contentsOf: corrupted)
        log.append(contentsOf: OutboxDeliveredLog.line(mutations[1].id.rawValue).prefix(20))   // torn by a kill
        try log.write(to: folder.appendingPathComponent("delivered.log"))

        server.stub(.post, "/v1/notes", .status(201))
        connectivity.set(online: true)
        let reopened = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        #expect(await reopened.pending.map(\.id) == mutations.dropFirst().map(\.id))
        #expect(deliveredLog(in: folder).isEmpty)
        let outcomes = OutcomeLog(reopened)
        await reopened.startDelivering()
        await outcomes.wait { $0.delivered.count == 3 }
        #expect(notesReceived(by: server) == [2, 3, 4])
        await reopened.close()
    }

    @Test("once the outbox is idle, the delivered mutations' files are removed and the log emptied, without a close")
    func removedWhenIdle() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.post, "/v1/notes", .status(201))
        connectivity.set(online: true)
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        let log = OutcomeLog(outbox)
        for n in 1...20 { try await outbox.enqueue(OutboxWrite.note(n)) }
        await outbox.startDelivering()
        await log.wait { $0.delivered.count == 20 }
        await pollUntil { recordFiles(in: folder).isEmpty && deliveredLog(in: folder).isEmpty }
        #expect(notesReceived(by: server) == Array(1...20))
        await outbox.close()
    }

    @Test("a log that cannot be written: the files are removed before the delivery is reported")
    func logRefused() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.post, "/v1/notes", .status(201))
        connectivity.set(online: true)
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        // A folder where the log goes: opening it for writing fails (EISDIR).
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("delivered.log"), withIntermediateDirectories: false)
        let checked = Recorder<Bool>()
        let records = folder.appendingPathComponent("records")
        let task = Task {
            for await outcome in outbox.outcomes {
                guard case .delivered(let mutation, _) = outcome else { continue }
                let path = records.appendingPathComponent("\(mutation.id).mutation").path
                checked.append(!FileManager.default.fileExists(atPath: path))   // gone when it is reported
                if checked.count == 3 { return }
            }
        }
        for n in 1...3 { try await outbox.enqueue(OutboxWrite.note(n)) }
        await outbox.startDelivering()
        await task.value
        #expect(checked.all == [true, true, true])
        await outbox.close()
    }
}
