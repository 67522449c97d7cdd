import Foundation
import OutboxCrashDriver
import Testing

/// The outbox's promise over real TCP (issue 32, Docs/Offline.md): a process killed with SIGKILL at any instant,
/// during an enqueue or while a delivery is in flight, loses no mutation whose `enqueue` returned, and a server that
/// honours `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header) applies each once. The short version of
/// `IntegrationTests/outbox-crash.sh` (100 kills): 10 kills, a fresh `OutboxCrashChild` on the same folder after each.
@Suite("Outbox crash test over TCP (SIGKILL)", .serialized, .timeLimit(.minutes(10)))
struct OutboxCrashTests {
    @Test("10 SIGKILLs during enqueue and delivery: every promised mutation applied once, under the key enqueue returned")
    func killedTenTimes() async throws {
        let child = try #require(Self.child, "no OutboxCrashChild: swift build --package-path IntegrationTests --build-tests")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        // GIVEN a child enqueueing 500 numbered POSTs and delivering them to a server that applies each key once
        var configuration = OutboxCrashRun.Configuration(child: child, folder: folder)
        configuration.kills = 10
        configuration.mutations = 500
        // WHEN it is killed 10 times at seeded random instants, restarted each time, and a last child completes
        let report = try await OutboxCrashRun.run(configuration)
        print(report.summary)
        // THEN nothing promised was lost, nothing was applied twice, each under the key enqueue returned
        #expect(report.kills == 10)
        #expect(report.lost.isEmpty, "lost: \(report.lost)")
        #expect(report.appliedTwice.isEmpty, "applied twice: \(report.appliedTwice)")
        #expect(report.keyChanged.isEmpty, "applied under another key: \(report.keyChanged)")
        #expect(report.failures.isEmpty, "\(report.failures) (seed \(report.seed))")
        // AND every mutation was attempted by the end; the interrupted ones were applied at most once
        #expect(report.attempted == 500)
        #expect(report.applied == report.promised + report.unconfirmedApplied)
    }

    /// `OutboxCrashChild` in this package's build folder (the debug build `swift build --build-tests` makes), or
    /// the one NETWORKING_OUTBOX_CHILD names.
    static var child: URL? {
        if let path = ProcessInfo.processInfo.environment["NETWORKING_OUTBOX_CHILD"] { return URL(fileURLWithPath: path) }
        let build = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build")
        return ["debug", "release"].map { build.appendingPathComponent($0).appendingPathComponent("OutboxCrashChild") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }
}
