import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

/// A store of `folder` whose every file removal fails, as a disk that refuses them would.
private func storeRefusingRemovals(_ folder: URL) -> OutboxStore {
    OutboxStore(folder: folder) { path, _ throws(DurabilityError) in throw .failed("unlink", path, errno: EIO) }
}

/// A write whose stored record is far larger than the outbox estimates before writing it (a long header:
/// the estimate counts the body and 1 KB for the rest).
private func writeWithLongHeader(body: RequestBody = .data(Data("{}".utf8), contentType: "application/json")) -> OutboxWrite {
    OutboxWrite(headers: ["X-Note": String(repeating: "n", count: 3_000)], body: body)
}

@Suite("Outbox: a refused enqueue leaves nothing behind", SuiteTimeLimit.oneMinute)
struct OutboxBoundsTests {
    let server = MockServer()

    @Test("full only once written (larger than estimated): .full, no record on disk even when removals fail, nothing sent next launch")
    func fullLeavesNoRecord() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        server.stub(.post, "/v1/notes", .status(201))
        let configuration = outboxConfiguration(maximumBytes: 2_000)
        let outbox = try await Outbox(store: storeRefusingRemovals(folder), provider: server.makeProvider(), configuration: configuration)
        await #expect {
            try await outbox.enqueue(writeWithLongHeader())
        } throws: { error in
            if case OutboxError.full = error { return true }
            return false
        }
        #expect(recordFiles(in: folder).isEmpty)   // the caller was told it was refused: nothing to deliver later
        #expect(await outbox.pending.isEmpty)
        let accepted = try await outbox.enqueue(OutboxWrite.note(1))   // its room was given back
        await outbox.close()

        let next = try await Outbox(folder: folder, provider: server.makeProvider(), configuration: configuration)
        let log = OutcomeLog(next)
        await next.startDelivering()
        await log.wait { $0.delivered.contains(accepted) }   // sent after anything enqueued before it
        #expect(server.requests(.post, "/v1/notes").count == 1)   // the refused write was never sent
        #expect(log.delivered == [accepted])
        await next.close()
    }

    @Test("full only once written, with a file body: refused, its copied body removed; a copy that cannot be removed is a storage failure")
    func fullRemovesCopiedBody() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = try makeScratchFolder().appendingPathComponent("note.txt")
        defer { try? FileManager.default.removeItem(at: source.deletingLastPathComponent()) }
        try Data(repeating: 7, count: 100).write(to: source)
        let write = writeWithLongHeader(body: .file(source, contentType: "text/plain"))
        let bodies = folder.appendingPathComponent("bodies")

        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(), configuration: outboxConfiguration(maximumBytes: 2_000))
        await #expect {
            try await outbox.enqueue(write)
        } throws: { error in
            if case OutboxError.full = error { return true }
            return false
        }
        #expect(recordFiles(in: folder).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: bodies.path).isEmpty)
        await outbox.close()

        let refusing = try await Outbox(
            store: storeRefusingRemovals(folder), provider: server.makeProvider(), configuration: outboxConfiguration(maximumBytes: 2_000))
        await #expect {
            try await refusing.enqueue(write)
        } throws: { error in
            if case OutboxError.storageFailed = error { return true }
            return false
        }
        #expect(recordFiles(in: folder).isEmpty)
        await refusing.close()
    }
}
