import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Transfers that end before, while and after the app is relaunched, through the simulated system.
@Suite("Background transfers across relaunches", SuiteTimeLimit.oneMinute)
struct BackgroundTransferRelaunchTests {
    @Test("A transfer that ends while the app runs is handed out at once, and its record removed")
    func endsBeforeRelaunch() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        app.server.stub(.post, "/v1/videos", MockResponse(statusCode: 201, body: Data("created".utf8)))
        let service = try await app.launch()
        var outcomes = service.outcomes.makeAsyncIterator()
        let record = try await service.upload(BackgroundAPI.upload("frames"), tag: "video-1")
        #expect(try app.recordFiles() == ["\(record.id.uuidString).record"])   // on disk before the task ran

        await app.system.run(record.id.uuidString)
        let outcome = try #require(await outcomes.next())
        #expect(outcome.record?.tag == "video-1")
        #expect(outcome.response?.statusCode == 201)
        #expect(outcome.response?.body == Data("created".utf8))
        #expect(app.server.requests.first?.body == Data("frames".utf8))
        #expect(await service.pendingTransfers.isEmpty)
        #expect(try app.recordFiles() == ["\(record.id.uuidString).record"])   // the outcome is kept until acknowledged
        await service.acknowledge(outcome)
        #expect(try app.recordFiles().isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: app.folder.appendingPathComponent("bodies").path).isEmpty)
    }

    @Test("A transfer that ends while the app is gone is handed out at the next launch, then the completion handler is called once")
    func endsWhileAppIsGone() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        app.server.stub(.post, "/v1/videos", .status(201))
        let first = try await app.launch()
        let record = try await first.upload(BackgroundAPI.upload(), tag: "video-2")
        await app.terminate(first)
        await app.system.run(record.id.uuidString)   // ends while the app is gone: its events wait

        let calls = Recorder<Bool>()
        let recordFile = app.recordsFolder.appendingPathComponent("\(record.id.uuidString).record")
        let second = try await app.launch { service in
            // iOS relaunches the app in the background and calls handleEventsForBackgroundURLSession.
            service.handleEventsForBackgroundURLSession(identifier: app.identifier) {
                // true: its outcome was kept on disk (until acknowledged) and handed out first
                calls.append((try? Data(contentsOf: recordFile))?.range(of: Data("\"outcome\"".utf8)) != nil)
            }
        }
        var outcomes = second.outcomes.makeAsyncIterator()
        let outcome = try #require(await outcomes.next())
        #expect(outcome.record?.id == record.id)
        #expect(outcome.response?.statusCode == 201)
        await waitForBackground { calls.all.count == 1 }
        #expect(calls.all == [true])
        #expect(!second.handleEventsForBackgroundURLSession(identifier: "another.session") {})
    }

    @Test("The completion handler is called exactly once, given before or after the events were handled")
    func completionHandlerAfterEvents() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        app.server.stub(.post, "/v1/videos", .status(201))
        let first = try await app.launch()
        let record = try await first.upload(BackgroundAPI.upload())
        await app.terminate(first)
        await app.system.run(record.id.uuidString)

        let second = try await app.launch()
        var outcomes = second.outcomes.makeAsyncIterator()
        _ = try #require(await outcomes.next())
        let calls = Recorder<Int>()
        await waitForBackground {
            // the finished-events news is handled by the service after the outcome: hand the handler over once it was
            await second.pendingTransfers.isEmpty
        }
        second.handleEventsForBackgroundURLSession(identifier: app.identifier) { calls.append(1) }
        await waitForBackground { calls.all.count == 1 }
        second.handleEventsForBackgroundURLSession(identifier: app.identifier) { calls.append(2) }   // a later batch's handler waits for its own events
        #expect(calls.all == [1])
    }

    @Test("A transfer still running at the next launch is reattached: its progress is observable and its outcome handed out")
    func endsAfterRelaunch() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        app.server.stub(.get, "/v1/files/report.pdf", MockResponse(statusCode: 200, body: Data(repeating: 7, count: 4_096)))
        let destination = app.folder.appendingPathComponent("report.pdf")
        let first = try await app.launch()
        let record = try await first.download(BackgroundAPI.download(), to: destination, tag: "report")
        await app.terminate(first)

        let second = try await app.launch()
        #expect(await second.pendingTransfers.map(\.id) == [record.id])
        let progress = await second.progress(of: record.id)
        var outcomes = second.outcomes.makeAsyncIterator()
        await app.system.run(record.id.uuidString)
        let outcome = try #require(await outcomes.next())
        #expect(outcome.response?.file == destination)
        #expect(FileManager.default.contents(atPath: destination.path) == Data(repeating: 7, count: 4_096))
        var seen: [TransferProgress] = []
        for await update in progress { seen.append(update) }   // finished with the transfer
        #expect(seen.last?.completedBytes == 4_096)
    }

    @Test("A record whose task the system forgot is reported lost at the next launch, never dropped")
    func forgottenTaskIsLost() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        let first = try await app.launch()
        let kept = try await first.upload(BackgroundAPI.upload(), tag: "kept")
        let forgotten = try await first.upload(BackgroundAPI.upload(), tag: "forgotten")
        await app.terminate(first)
        app.system.forget(forgotten.id.uuidString)   // the user force-quit the app, say

        let second = try await app.launch()
        var outcomes = second.outcomes.makeAsyncIterator()
        let outcome = try #require(await outcomes.next())
        #expect(outcome.record?.id == forgotten.id)
        guard case .lost? = outcome.error else {
            Issue.record("expected lost, got \(outcome)")
            return
        }
        #expect(await second.pendingTransfers.map(\.id) == [kept.id])
        await second.acknowledge(outcome)
        #expect(try app.recordFiles() == ["\(kept.id.uuidString).record"])
    }
}

/// Waits until `condition` holds, checking every millisecond; the suite's time limit ends a wait that never does.
func waitForBackground(_ condition: () async -> Bool) async {
    while await !condition(), !Task.isCancelled { try? await Task.sleep(nanoseconds: 1_000_000) }
}

/// A session that notes, when each task is created, whether the transfer's record was already on disk.
final class RecordCheckingSession: BackgroundTransferSession, @unchecked Sendable {
    let base: SimulatedBackgroundSession
    let recordsFolder: URL
    let recordWasOnDisk = Recorder<Bool>()
    var identifier: String { base.identifier }

    init(base: SimulatedBackgroundSession, recordsFolder: URL) {
        self.base = base
        self.recordsFolder = recordsFolder
    }

    func attach(_ receiver: any BackgroundSessionReceiver) { base.attach(receiver) }
    func startTask(_ request: BackgroundSessionTaskRequest) throws {
        recordWasOnDisk.append(FileManager.default.fileExists(atPath: recordsFolder.appendingPathComponent(request.label + ".record").path))
        try base.startTask(request)
    }
    func taskLabels() async -> Set<String> { await base.taskLabels() }
    func cancelTask(labelled label: String) { base.cancelTask(labelled: label) }
}

@Suite("Background transfer records", SuiteTimeLimit.oneMinute)
struct BackgroundTransferRecordOrderTests {
    @Test("Each transfer is on disk before its task is created and resumed")
    func recordBeforeTask() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        let session = RecordCheckingSession(base: app.system.launch(identifier: app.identifier), recordsFolder: app.recordsFolder)
        let service = try BackgroundTransferService(session: session, folder: app.folder)
        try await service.start()
        try await service.upload(BackgroundAPI.upload())
        try await service.download(BackgroundAPI.download(), to: app.folder.appendingPathComponent("report.pdf"))
        #expect(session.recordWasOnDisk.all == [true, true])
    }

    @Test("An upload from a file that cannot be read throws and leaves no record behind")
    func refusedTask() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        let service = try await app.launch()
        let missing = app.folder.appendingPathComponent("missing.mp4")
        await #expect(throws: (any Error).self) {
            try await service.upload(BackgroundAPI(path: "/v1/videos", body: .file(missing, contentType: "video/mp4")))
        }
        #expect(try app.recordFiles().isEmpty)
    }

    @Test("A transfer is refused before start() and after stop(): its events would have nowhere to go")
    func refusedWhenNotRunning() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        let service = try BackgroundTransferService(session: app.system.launch(identifier: app.identifier), folder: app.folder)
        await #expect(throws: NetworkError.self) { try await service.upload(BackgroundAPI.upload()) }
        try await service.start()
        try await service.upload(BackgroundAPI.upload())
        await service.stop()
        await #expect(throws: NetworkError.self) { try await service.upload(BackgroundAPI.upload()) }
        #expect(app.system.waitingTasks.count == 1)
    }

    @Test("One service a folder: a second one is refused until the first stops")
    func oneServiceAFolder() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        let first = try await app.launch()
        #expect(throws: NetworkError.self) { try BackgroundTransferService(session: app.system.launch(identifier: app.identifier), folder: app.folder) }
        await app.terminate(first)
        _ = try await app.launch()
    }
}
