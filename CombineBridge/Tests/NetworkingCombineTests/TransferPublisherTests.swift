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

/// What the decoded upload publisher's server answers.
private struct UploadedClip: Codable, Equatable, Sendable {
    let id: Int
    let bytes: Int
}

/// `uploadPublisher` and `downloadPublisher`: progress, then the response; cancelled with the subscription.
@Suite("Combine: transfer publishers", SuiteTimeLimit.oneMinute)
struct TransferPublisherTests {
    /// Whether the progress values rise and end at `total` bytes.
    private func risesTo(_ total: Int64, _ events: [TransferEvent<Response>]) -> Bool {
        let steps = events.compactMap(\.progress).map(\.completedBytes)
        return zip(steps, steps.dropFirst()).allSatisfy { $0 <= $1 } && steps.last == total
    }

    @Test func anUploadPublisherEmitsProgressThenTheResponseThenFinishes() async throws {
        // GIVEN a server that reads a 256 KiB body 64 KiB at a time
        let server = MockServer()
        server.stub(.put, "/v1/clips/1", MockResponse.status(204).throttled(bytesPerChunk: 65_536, every: 0.01))
        let body = RequestBody.data(fileBody(262_144), contentType: "application/octet-stream")
        // WHEN a subscriber subscribes to its upload
        let probe = Probe<TransferEvent<Response>>()
        server.makeProvider().uploadPublisher(API(path: "/clips/1", method: .put, body: body, timeout: 30)).subscribe(probe)
        // THEN it sees progress up to the whole body, then the response last, then the end
        guard case .finished = await probe.completion() else { throw Failed("did not finish") }
        #expect(risesTo(262_144, probe.values))
        #expect(probe.values.last?.response?.statusCode == 204)
        #expect(probe.values.dropLast().allSatisfy { $0.response == nil })
        #expect(server.requests.first?.body.count == 262_144)
    }

    @Test func aDecodedUploadPublisherEmitsProgressThenTheDecodedValueThenFinishes() async throws {
        // GIVEN a server that reads a 256 KiB body 64 KiB at a time and answers a JSON clip
        let server = MockServer()
        server.stub(.put, "/v1/clips/1", MockResponse.json(UploadedClip(id: 1, bytes: 262_144)).throttled(bytesPerChunk: 65_536, every: 0.01))
        let body = RequestBody.data(fileBody(262_144), contentType: "application/octet-stream")
        // WHEN a subscriber subscribes to its decoded upload
        let probe = Probe<TransferEvent<UploadedClip>>()
        server.makeProvider().uploadPublisher(API(path: "/clips/1", method: .put, body: body, timeout: 30), as: UploadedClip.self).subscribe(probe)
        // THEN it sees progress up to the whole body, then the decoded value last, then the end
        guard case .finished = await probe.completion() else { throw Failed("did not finish") }
        let steps = probe.values.compactMap(\.progress).map(\.completedBytes)
        #expect(zip(steps, steps.dropFirst()).allSatisfy { $0 <= $1 } && steps.last == 262_144)
        #expect(probe.values.last?.outcome == UploadedClip(id: 1, bytes: 262_144))
        #expect(probe.values.dropLast().allSatisfy { $0.outcome == nil })
    }

    @Test func aDecodedUploadPublisherFailsWithTheDecodingError() async throws {
        let server = MockServer()
        server.stub(.put, "/v1/clips/1", MockResponse.json(raw: #"{"id":"one"}"#))
        let probe = Probe<TransferEvent<UploadedClip>>()
        let body = RequestBody.data(fileBody(1_024), contentType: "application/octet-stream")
        server.makeProvider().uploadPublisher(API(path: "/clips/1", method: .put, body: body, timeout: 30), as: UploadedClip.self).subscribe(probe)
        guard case .failure(let error) = await probe.completion() else { throw Failed("did not fail") }
        guard case .decodingFailed? = error as? NetworkError else { throw Failed("not a decoding failure: \(error)") }
        #expect(probe.values.allSatisfy { $0.outcome == nil })
    }

    @Test func aDownloadPublisherEmitsProgressThenTheResponseAndTheFileIsWhole() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin", MockResponse(body: fileBody(40_000)).throttled(bytesPerChunk: 10_000, every: 0.01))
        let destination = folder.appendingPathComponent("big.bin")
        let probe = Probe<TransferEvent<Response>>()
        server.makeProvider().downloadPublisher(API(path: "/files/big.bin", timeout: 30), to: destination).subscribe(probe)
        guard case .finished = await probe.completion() else { throw Failed("did not finish") }
        #expect(risesTo(40_000, probe.values))
        #expect(probe.values.last?.response?.statusCode == 200)
        #expect(try Data(contentsOf: destination) == fileBody(40_000))
    }

    @Test func aSubscriberAskingForOneEventGetsOneAndTheTransferWaitsForItsCancel() async throws {
        // GIVEN a download that stalls half way, and a subscriber that asks for one event only
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin", MockResponse(body: fileBody(20_000)).stallingAfter(bytes: 10_000))
        let probe = Probe<TransferEvent<Response>>(initialDemand: .max(1))
        server.makeProvider().downloadPublisher(API(path: "/files/big.bin", timeout: 60), to: folder.appendingPathComponent("f")).subscribe(probe)
        // THEN it gets exactly one progress value
        #expect(await probe.values(count: 1).count == 1)
        #expect(probe.values.first?.progress != nil)
        // WHEN it cancels, THEN the download is stopped at the server
        probe.cancel()
        #expect(await server.waitForInterruptions(1))
        #expect(probe.values.count == 1 && probe.completed == nil)
    }

    @Test func cancellingAnUploadsSubscriptionCancelsTheUploadAtOnce() async throws {
        let server = MockServer()
        server.stub(.put, "/v1/clips/1", MockResponse.status(204).delayed(by: 30))
        let probe = Probe<TransferEvent<Response>>()
        let body = RequestBody.data(Data("clip".utf8), contentType: "application/octet-stream")
        server.makeProvider().uploadPublisher(API(path: "/clips/1", method: .put, body: body)).subscribe(probe)
        _ = try await server.nextRequest(matching: .put, "/v1/clips/1")
        probe.cancel()
        #expect(await server.waitForInterruptions(1))
        #expect(probe.completed == nil)
    }

    @Test func aDownloadPublisherFailsWithTheCallsError() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin", .status(404))
        let probe = Probe<TransferEvent<Response>>()
        server.makeProvider().downloadPublisher(API(path: "/files/big.bin"), to: folder.appendingPathComponent("f")).subscribe(probe)
        guard case NetworkError.invalidStatusCode(404)? = await probe.failure() else { throw Failed("expected a 404") }
        #expect(probe.values.allSatisfy { $0.response == nil })
    }
}
