import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The app's container moves (an app update gives it a new path): records keep working.
@Suite("Background transfers across a moved container", SuiteTimeLimit.oneMinute)
struct BackgroundTransferContainerTests {
    @Test("a download enqueued before an app update lands at its destination in the new container")
    func destinationFollowsTheContainer() async throws {
        let root = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let server = MockServer()
        server.stub(.get, "/v1/files/report.pdf", MockResponse(statusCode: 200, body: Data("pdf".utf8)))
        let system = SimulatedBackgroundSystem(server: server)
        defer { try? FileManager.default.removeItem(at: system.folder) }
        let old = root.appendingPathComponent("Application-1")
        try FileManager.default.createDirectory(at: old.appendingPathComponent("Documents"), withIntermediateDirectories: true)
        let first = try BackgroundTransferService(
            session: system.launch(identifier: "transfers"),
            store: BackgroundTransferFileStore(folder: old.appendingPathComponent("transfers/records")),
            folder: old.appendingPathComponent("transfers"), authenticator: nil, homeDirectory: old.path)
        try await first.start()
        let record = try await first.download(BackgroundAPI.download(), to: old.appendingPathComponent("Documents/report.pdf"))
        system.terminateApp()
        await first.stop()

        let new = root.appendingPathComponent("Application-2")   // the update: the same files, another path
        try FileManager.default.moveItem(at: old, to: new)
        await system.run(record.id.uuidString)
        let second = try BackgroundTransferService(
            session: system.launch(identifier: "transfers"),
            store: BackgroundTransferFileStore(folder: new.appendingPathComponent("transfers/records")),
            folder: new.appendingPathComponent("transfers"), authenticator: nil, homeDirectory: new.path)
        try await second.start()
        var outcomes = second.outcomes.makeAsyncIterator()
        let outcome = try #require(await outcomes.next())
        let landed = new.appendingPathComponent("Documents/report.pdf")
        #expect(outcome.response?.file?.standardizedFileURL.path == landed.standardizedFileURL.path, "got \(outcome)")
        #expect(FileManager.default.contents(atPath: landed.path) == Data("pdf".utf8))
    }
}
