import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A credential store whose first `load()` waits until the test opens it.
actor ReviewGatedStore: CredentialStore {
    var credential: Credential?
    var loads = 0
    var isOpen = false
    var waiters: [CheckedContinuation<Void, Never>] = []
    init(_ credential: Credential?) { self.credential = credential }
    func load() async throws -> Credential? {
        loads += 1
        if !isOpen { await withCheckedContinuation { waiters.append($0) } }
        return credential
    }
    func save(_ credential: Credential) async throws { self.credential = credential }
    func delete() async throws { credential = nil }
    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }
}

/// A session whose task list no longer has a task that ended, and whose events arrive after `getAllTasks` answered.
final class ReviewLateEventsSession: BackgroundTransferSession, @unchecked Sendable {
    let identifier: String
    private let lock = NSLock()
    private var receiver: (any BackgroundSessionReceiver)?
    init(identifier: String) { self.identifier = identifier }
    func attach(_ receiver: any BackgroundSessionReceiver) {
        lock.lock()
        self.receiver = receiver
        lock.unlock()
    }
    func startTask(_ request: BackgroundSessionTaskRequest) throws {}
    func taskLabels() async -> Set<String> { [] }
    func cancelTask(labelled label: String) {}
    func deliver(_ event: BackgroundSessionEvent) {
        lock.lock()
        let receiver = self.receiver
        lock.unlock()
        receiver?.receive(event)
    }
}

@Suite("Background transfers: review findings", SuiteTimeLimit.oneMinute)
struct BackgroundTransferReviewTests {
    @Test("R1: an outcome handed to `outcomes` but not yet read when the process ends is not lost")
    func outcomeNotReadBeforeTermination() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        app.server.stub(.post, "/v1/videos", .status(201))
        let first = try await app.launch()
        let record = try await first.upload(BackgroundAPI.upload(), tag: "video")
        await app.system.run(record.id.uuidString)
        await waitForBackground { await first.pendingTransfers.isEmpty }   // handed to `outcomes`, in its buffer
        await app.terminate(first)   // iOS suspends then kills the app before its loop read (or finished applying) it

        let second = try await app.launch()
        let probe = try await second.upload(BackgroundAPI.upload(), tag: "probe")
        await app.system.run(probe.id.uuidString)
        var outcomes = second.outcomes.makeAsyncIterator()
        let next = try #require(await outcomes.next())
        #expect(next.record?.id == record.id, "the first transfer's outcome (or at least .lost) must come again; got \(next)")
    }

    @Test("R2: stop() while an outcome is being worked out does not remove the record of an outcome never handed out")
    func stopDuringOutcome() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        app.server.stub(.post, "/v1/videos", .status(401))
        let first = try await app.launch(authenticator: backgroundAuthenticator())
        let record = try await first.upload(BackgroundAPI.upload())
        await app.terminate(first)
        await app.system.run(record.id.uuidString)   // 401 while the app is gone

        let store = ReviewGatedStore(Credential(accessToken: "token-A1", refreshToken: "r", account: "A"))
        let auth = AuthInterceptor(baseURL: URL(string: "https://api.example.com")!, store: store, refresh: { credential, _ in credential })
        let second = try await app.launch(authenticator: auth)
        await waitForBackground { await store.loads == 1 }   // the pump awaits the credential for the 401
        await app.terminate(second)   // the process ends
        await store.open()
        await waitForBackground { await second.pendingTransfers.isEmpty }
        var delivered: [BackgroundTransferOutcome] = []
        for await outcome in second.outcomes { delivered.append(outcome) }
        let onDisk = try app.recordFiles().contains("\(record.id.uuidString).record")
        #expect(!delivered.isEmpty || onDisk, "outcome dropped and record removed: the transfer ends unreported")
    }

    @Test("R3: a transfer the app cancels after it succeeded (its completion still queued) is not reported cancelled")
    func cancelAfterSuccess() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        app.server.stub(.post, "/v1/videos", .status(401))
        app.server.stub(.post, "/v1/photos", .status(201))
        let first = try await app.launch(authenticator: backgroundAuthenticator())
        let blocked = try await first.upload(BackgroundAPI.upload())
        let done = try await first.upload(BackgroundAPI.upload(path: "/v1/photos"), tag: "photo")
        await app.terminate(first)
        await app.system.run(blocked.id.uuidString)
        await app.system.run(done.id.uuidString)   // the server stored the photo: 201

        let store = ReviewGatedStore(Credential(accessToken: "token-A1", refreshToken: "r", account: "A"))
        let auth = AuthInterceptor(baseURL: URL(string: "https://api.example.com")!, store: store, refresh: { credential, _ in credential })
        let second = try await app.launch(authenticator: auth)
        var outcomes = second.outcomes.makeAsyncIterator()
        await waitForBackground { await store.loads == 1 }
        #expect(await second.pendingTransfers.map(\.id).contains(done.id))   // the UI still lists it
        await second.cancel(done.id)   // the user taps cancel
        await store.open()
        let ended = await nextOutcomes(2, of: &outcomes)
        let photo = try #require(ended.first { $0.record?.id == done.id })
        #expect(photo.response?.statusCode == 201, "the server stored it; reported as \(photo)")
    }

    @Test("R4: a completion delivered after getAllTasks answered is not reported lost and then dropped")
    func lateCompletionIsNotLost() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        let first = try await app.launch()
        let record = try await first.upload(BackgroundAPI.upload())
        await app.terminate(first)

        let session = ReviewLateEventsSession(identifier: app.identifier)
        let second = try BackgroundTransferService(session: session, folder: app.folder)
        second.handleEventsForBackgroundURLSession(identifier: app.identifier) {}   // iOS woke the app for these events
        try await second.start()
        session.deliver(.completed(label: record.id.uuidString, response: BackgroundSessionResponse(statusCode: 201), error: nil))
        session.deliver(.finishedEvents)
        var outcomes = second.outcomes.makeAsyncIterator()
        let outcome = try #require(await outcomes.next())
        #expect(outcome.response?.statusCode == 201, "got \(outcome)")
    }

    @Test("R5: a task the system cancelled while the app was gone (a force-quit) is reported as documented (.lost), not as a transport error")
    func forceQuitIsReportedAsDocumented() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        let first = try await app.launch()
        let record = try await first.upload(BackgroundAPI.upload())
        await app.terminate(first)
        app.system.forceQuitApp()   // iOS cancels the tasks, and delivers -999 at the next launch
        let second = try await app.launch()
        var outcomes = second.outcomes.makeAsyncIterator()
        let outcome = try #require(await outcomes.next())
        #expect(outcome.record?.id == record.id)
        if case .lost? = outcome.error {} else { Issue.record("docs say .lost for a force-quit; got \(outcome)") }
    }
}

@Suite("Background transfers: outcomes kept until acknowledged", SuiteTimeLimit.oneMinute)
struct BackgroundTransferAcknowledgementTests {
    @Test("an acknowledged outcome is not told again at the next launch; an unacknowledged one is, once a launch")
    func acknowledgedOutcomeIsNotToldAgain() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        app.server.stub(.post, "/v1/videos", MockResponse(statusCode: 201, body: Data("created".utf8)))
        let first = try await app.launch()
        var outcomes = first.outcomes.makeAsyncIterator()
        let told = try await first.upload(BackgroundAPI.upload(), tag: "told")
        let applied = try await first.upload(BackgroundAPI.upload(), tag: "applied")
        await app.system.runAll()
        for outcome in await nextOutcomes(2, of: &outcomes) where outcome.record?.id == applied.id { await first.acknowledge(outcome) }
        await app.terminate(first)

        let second = try await app.launch()
        var again = second.outcomes.makeAsyncIterator()
        let outcome = try #require(await again.next())
        #expect(outcome.record?.id == told.id)
        #expect(outcome.response?.statusCode == 201)
        #expect(outcome.response?.body == Data("created".utf8))   // the response as it was, kept on disk
        #expect(await second.pendingTransfers.isEmpty)
        await second.acknowledge(outcome)
        #expect(try app.recordFiles().isEmpty)
    }

    @Test("a completion delivered after the record was reported lost (no wake: no handler) is still told")
    func lateCompletionAfterLostIsTold() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        let first = try await app.launch()
        let record = try await first.upload(BackgroundAPI.upload())
        await app.terminate(first)

        let session = ReviewLateEventsSession(identifier: app.identifier)
        let second = try BackgroundTransferService(session: session, folder: app.folder)
        try await second.start()
        var outcomes = second.outcomes.makeAsyncIterator()
        let lost = try #require(await outcomes.next())
        guard case .lost? = lost.error else {
            Issue.record("expected lost, got \(lost)")
            return
        }
        session.deliver(.completed(label: record.id.uuidString, response: BackgroundSessionResponse(statusCode: 201), error: nil))
        let late = try #require(await outcomes.next())
        #expect(late.record?.id == record.id)
        #expect(late.response?.statusCode == 201)
    }

    @Test("a stopped service no longer takes its session's events: they wait for the next launch (review 9)")
    func stoppedServiceDetaches() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        app.server.stub(.post, "/v1/videos", .status(201))
        let first = try await app.launch()
        let record = try await first.upload(BackgroundAPI.upload())
        await first.stop()   // the service stops; the system was not told the app is gone
        await app.system.run(record.id.uuidString)

        let second = try await app.launch()
        var outcomes = second.outcomes.makeAsyncIterator()
        let outcome = try #require(await outcomes.next())
        #expect(outcome.record?.id == record.id)
        #expect(outcome.response?.statusCode == 201, "got \(outcome)")
    }
}
