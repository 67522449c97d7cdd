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
        let first = Probe<TransferEvent>()
        provider.downloadPublisher(API(path: "/files/big.bin"), to: destination, resuming: nil).subscribe(first)
        // THEN it fails with DownloadInterrupted, carrying the 6,000 bytes kept
        let error = await first.failure()
        guard let interrupted = error as? DownloadInterrupted else { throw Failed("expected DownloadInterrupted, got \(String(describing: error))") }
        #expect(interrupted.resumable.bytesReceived == 6_000)
        // WHEN a second publisher continues it
        let second = Probe<TransferEvent>()
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
        let probe = Probe<TransferEvent>()
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
        let resumed = Probe<TransferEvent>()
        provider.downloadPublisher(resuming: resumable, to: destination).subscribe(resumed)
        // THEN the rest came, and the file is whole
        guard case .finished = await resumed.completion() else { throw Failed("did not finish") }
        #expect(server.requests.last?.header("Range") == "bytes=6000-")
        #expect(try Data(contentsOf: destination) == fileBody(10_000))
    }
}
