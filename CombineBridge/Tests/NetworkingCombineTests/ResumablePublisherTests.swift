import Foundation
import Networking
import NetworkingCombine
import NetworkingTestSupport
import Testing

#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif

/// The resumable download publishers: the resume value on failure (RFC 9110 §14.2 ranges, §13.1.5 If-Range),
/// and on cancel through `onCancel`.
@Suite("Combine: resumable download publishers", SuiteTimeLimit.oneMinute)
struct ResumablePublisherTests {
    /// Serves `file` at `/v1/files/big.bin`, its first answer changed by `first` (cut or stalled).
    private func serve(_ file: MockResource, on server: MockServer, first: @escaping @Sendable (MockResponse) -> MockResponse) {
        let answered = Flag()
        server.stub(.get, "/v1/files/big.bin") { request in
            let isFirst = !answered.isSet
            answered.set()
            return isFirst ? first(file.response(to: request)) : file.response(to: request)
        }
    }

    @Test func aDownloadThatDropsFailsWithTheResumeValueAndThatValueFinishesItWithTheRest() async throws {
        // GIVEN a 10,000-byte file with a strong ETag whose first answer drops after 6,000 bytes
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = MockResource(body: fileBody(10_000), etag: "\"v1\"")
        let server = MockServer()
        serve(file, on: server) { $0.closingAfter(bytes: 6_000) }
        let provider = server.makeProvider()
        let destination = folder.appendingPathComponent("big.bin")
        // WHEN it is downloaded through the publisher
        let first = Probe<TransferEvent<Response>>()
        provider.downloadPublisher(API(path: "/files/big.bin"), to: destination, resuming: nil).subscribe(first)
        // THEN it fails with DownloadInterrupted, carrying the 6,000 bytes kept
        let error = await first.failure()
        guard let interrupted = error as? DownloadInterrupted else { throw Failed("expected DownloadInterrupted, got \(String(describing: error))") }
        #expect(interrupted.resumable.bytesReceived == 6_000)
        // WHEN a second publisher continues it
        let second = Probe<TransferEvent<Response>>()
        provider.downloadPublisher(API(path: "/files/big.bin"), to: destination, resuming: interrupted.resumable).subscribe(second)
        // THEN it asked for the rest only, and the file is whole
        guard case .finished = await second.completion() else { throw Failed("did not finish") }
        #expect(second.values.last?.response?.statusCode == 206)
        #expect(server.requests.map { $0.header("Range") } == [nil, "bytes=6000-"])
        #expect(try Data(contentsOf: destination) == fileBody(10_000))
    }

    @Test func cancellingTheSubscriptionHandsTheResumeValueToOnCancelAndItContinues() async throws {
        // GIVEN a download whose first answer stalls after 6,000 bytes
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = MockResource(body: fileBody(10_000), etag: "\"v1\"")
        let server = MockServer()
        serve(file, on: server) { $0.stallingAfter(bytes: 6_000) }
        let provider = server.makeProvider()
        let destination = folder.appendingPathComponent("big.bin")
        let kept = Mailbox<ResumableDownload>()
        let probe = Probe<TransferEvent<Response>>()
        provider.downloadPublisher(API(path: "/files/big.bin", timeout: 60), to: destination, resuming: nil, onCancel: { kept.put($0) })
            .subscribe(probe)
        _ = await probe.values(until: { $0.progress?.completedBytes == 6_000 })
        // WHEN the subscription is cancelled (a pause)
        probe.cancel()
        // THEN the transfer stops, onCancel gets what continues it, and the subscriber hears nothing
        #expect(await server.waitForInterruptions(1))
        let resumable = try #require(await kept.take())
        #expect(resumable.bytesReceived == 6_000)
        #expect(probe.completed == nil)
        // WHEN the value alone continues it
        let resumed = Probe<TransferEvent<Response>>()
        provider.downloadPublisher(resuming: resumable, to: destination).subscribe(resumed)
        // THEN the rest came, and the file is whole
        guard case .finished = await resumed.completion() else { throw Failed("did not finish") }
        #expect(server.requests.last?.header("Range") == "bytes=6000-")
        #expect(try Data(contentsOf: destination) == fileBody(10_000))
    }

    @Test func onCancelIsNotCalledForACancelBeforeTheFirstDemandNorAfterTheEnd() async throws {
        // GIVEN a file served whole, and downloads of it that hand onCancel's values to `handed`
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = MockServer()
        serve(MockResource(body: fileBody(10_000), etag: "\"v1\""), on: server) { $0 }
        let provider = server.makeProvider()
        let handed = Counter<ResumableDownload>()
        // WHEN one subscription is cancelled before it asked for anything
        let early = Probe<TransferEvent<Response>>(initialDemand: .none)
        provider.downloadPublisher(API(path: "/files/big.bin"), to: folder.appendingPathComponent("early"), resuming: nil) { handed.append($0) }
            .subscribe(early)
        early.cancel()
        // AND another is cancelled after it finished
        let late = Probe<TransferEvent<Response>>()
        provider.downloadPublisher(API(path: "/files/big.bin"), to: folder.appendingPathComponent("late"), resuming: nil) { handed.append($0) }
            .subscribe(late)
        guard case .finished = await late.completion() else { throw Failed("did not finish") }
        late.cancel()
        // THEN onCancel was never called (nothing was kept for later), and only the second one was sent
        #expect(handed.values.isEmpty)
        #expect(server.requests.count == 1)
    }

    /// A 10,000-byte file whose first answer sends 1,000 bytes every 10 ms (a progress value each) and
    /// drops after 6,000: the download fails with ``DownloadInterrupted`` while progress values are unread.
    private func serveDroppingSlowly(on server: MockServer) {
        serve(MockResource(body: fileBody(10_000), etag: "\"v1\""), on: server) {
            $0.closingAfter(bytes: 6_000).throttled(bytesPerChunk: 1_000, every: 0.01)
        }
    }

    @Test func aFailureReachesASubscriberWithNoDemandOutstandingAndTheUnaskedProgressIsDropped() async throws {
        // GIVEN a download that drops after 6,000 bytes, and a subscriber that asked for one value only
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = MockServer()
        serveDroppingSlowly(on: server)
        let probe = Probe<TransferEvent<Response>>(initialDemand: .max(1))
        server.makeProvider().downloadPublisher(API(path: "/files/big.bin"), to: folder.appendingPathComponent("f"), resuming: nil)
            .subscribe(probe)
        // THEN it hears the failure, with what continues it, without asking again (Combine sends a
        // completion without demand); the progress it did not ask for is not sent
        let error = await probe.failure()
        guard let interrupted = error as? DownloadInterrupted else { throw Failed("expected DownloadInterrupted, got \(String(describing: error))") }
        #expect(interrupted.resumable.bytesReceived == 6_000)
        #expect(probe.values.count == 1)
    }

    @Test(arguments: [false, true])
    func aCancelRacingTheFailureHandsTheResumeValueToTheSubscriberOrOnCancelExactlyOnce(cancelFirst: Bool) async throws {
        // GIVEN a download that drops after 6,000 bytes, a subscriber that asked for one value, and an
        // onCancel; the provider tells the test when the download failed, before the bridge sees it
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = MockServer()
        serveDroppingSlowly(on: server)
        let outcome = Flag()
        let handedToOnCancel = Counter<ResumableDownload>()
        let probe = Probe<TransferEvent<Response>>(initialDemand: .max(1), onCompletion: { outcome.set() })
        let failed = Flag()
        // (cancelFirst: the subscription is cancelled before the bridge sees the failure, deterministically)
        let provider = Interrupting(base: server.makeProvider()) {
            if cancelFirst { probe.cancel() }
            failed.set()
        }
        provider.downloadPublisher(
            API(path: "/files/big.bin"), to: folder.appendingPathComponent("f"), resuming: nil,
            onCancel: {
                handedToOnCancel.append($0)
                outcome.set()
            }
        )
        .subscribe(probe)
        // WHEN the subscriber cancels (a pause) once the download failed
        await failed.wait()
        probe.cancel()
        // THEN the resume value reaches exactly one of them: the subscriber in the failure, or onCancel (it
        // used to reach neither when the failure waited behind a progress value nobody asked for)
        await outcome.wait()
        var delivered = false
        if case .failure(let error) = probe.completed { delivered = error is DownloadInterrupted }
        let handed = handedToOnCancel.values
        #expect((delivered ? 1 : 0) + handed.count == 1)
        #expect(handed.allSatisfy { $0.bytesReceived == 6_000 })
        if cancelFirst { #expect(handed.count == 1) }
    }
}

/// A provider that downloads through `base` and calls `whenInterrupted` when a resumable download failed
/// with ``DownloadInterrupted``, before it rethrows.
private struct Interrupting: NetworkProviding {
    let base: NetworkProvider
    let whenInterrupted: @Sendable () -> Void

    func request<T: Decodable>(_ endpoint: some Endpoint, as type: T.Type, interceptor: (any RequestInterceptor)?) async throws -> T {
        try await base.request(endpoint, as: type, interceptor: interceptor)
    }

    func response(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?) async throws -> Response {
        try await base.response(endpoint, interceptor: interceptor)
    }

    func download(
        _ endpoint: some Endpoint, to destination: URL, resuming resumable: ResumableDownload?, interceptor: (any RequestInterceptor)?,
        progress: ProgressReporter?
    ) async throws -> Response {
        do {
            return try await base.download(endpoint, to: destination, resuming: resumable, interceptor: interceptor, progress: progress)
        } catch let interrupted as DownloadInterrupted {
            whenInterrupted()
            throw interrupted
        }
    }
}
