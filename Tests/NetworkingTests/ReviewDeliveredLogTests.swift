import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

/// A file removal that blocks the first time it is asked to remove a record file, until `release()`.
private final class RemovalGate: @unchecked Sendable {
    // @unchecked: the state is guarded by `lock`.
    private let lock = NSLock()
    private let semaphore = DispatchSemaphore(value: 0)
    private var blocked = false
    private var entered = false

    var hasBlocked: Bool {
        lock.lock()
        defer { lock.unlock() }
        return entered
    }

    func release() { semaphore.signal() }

    func removal() -> OutboxStore.FileRemoval {
        { path, syncsFolder throws(DurabilityError) in
            var blocks = false
            if path.hasSuffix(".mutation") {
                self.lock.lock()
                if !self.blocked {
                    self.blocked = true
                    self.entered = true
                    blocks = true
                }
                self.lock.unlock()
            }
            if blocks { self.semaphore.wait() }   // runs on BlockingFileWork's queue: blocking is its job
            try DurableFile.remove(path, syncsFolder: syncsFolder)
        }
    }
}

/// Review of the delivered log (issue 32).
@Suite("Review: the delivered log", SuiteTimeLimit.oneMinute)
struct ReviewDeliveredLogTests {
    let server = MockServer()
    let connectivity = ManualConnectivity(isOnline: false)

    /// Docs/Offline.md: the files of delivered mutations are removed "when the outbox is idle". A delivery
    /// acknowledged while an earlier cleanup is still removing files reaches the idle point when that cleanup
    /// is busy (`removeDeliveredFiles()` returns at once), and nothing looks at `awaitingRemoval` again until
    /// the next wake: its files stay on disk, uncounted, for as long as the app enqueues nothing.
    @Test("a delivery acknowledged while a cleanup runs: its files are removed once the outbox is idle")
    func idleWhileCleanupRuns() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let gate = RemovalGate()
        server.stub(.post, "/v1/notes", .status(201))
        connectivity.set(online: true)
        let store = OutboxStore(folder: folder, removeFile: gate.removal())
        let outbox = try await Outbox(store: store, provider: server.makeProvider(connectivity: connectivity), configuration: OutboxConfiguration())
        let log = OutcomeLog(outbox)
        try await outbox.enqueue(OutboxWrite.note(1))
        await outbox.startDelivering()
        await log.wait { $0.delivered.count == 1 }
        await pollUntil { gate.hasBlocked }   // idle: the first mutation's files are being removed (held here)
        let second = try await outbox.enqueue(OutboxWrite.note(2))
        await log.wait { $0.delivered.count == 2 }
        while await !outbox.senders.isEmpty { try await Task.sleep(nanoseconds: 1_000_000) }
        try await Task.sleep(nanoseconds: 200_000_000)   // lets the loop reach its idle point (only detection depends on it)
        gate.release()
        while await outbox.cleanupTask != nil || recordFiles(in: folder).count == 2 { try await Task.sleep(nanoseconds: 1_000_000) }
        // The outbox is idle and no cleanup runs: nothing delivered should still wait for its removal.
        #expect(await outbox.awaitingRemoval.isEmpty)
        #expect(!recordFiles(in: folder).contains("\(second.id).mutation"))
        await outbox.close()
    }

    /// Docs/Offline.md "On disk": "When the log cannot be written, the files are removed before the delivery is
    /// reported instead" — the outbox runs on with a log it cannot write (the suite's `logRefused` test makes
    /// one: a folder at its path). But the next `Outbox(folder:)` reads the log first and a read error fails
    /// the opening: the outbox can never be opened again, its pending mutations never sent. The log only
    /// saves duplicate sends (each with its key), so a log that cannot be read costs at most those.
    @Test("a log that cannot be read (a folder at its path) does not keep the outbox from opening")
    func unreadableLogAtOpen() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        let pending = try await outbox.enqueue(OutboxWrite.note(1))
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("delivered.log"), withIntermediateDirectories: false)
        await outbox.close()

        let reopened = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        #expect(await reopened.pending == [pending])
        await reopened.close()
    }
}
