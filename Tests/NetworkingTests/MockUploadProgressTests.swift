import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Upload progress through the mock comes a chunk at a time, as URLSession reports a real upload's, and
/// ends at the whole body.
@Suite("Mock upload progress", SuiteTimeLimit.oneMinute)
struct MockUploadProgressTests {
    private static let size = 1 << 20   // 1 MiB

    /// Uploads `body` to a server that reads it 128 KiB every 20 ms, and returns the progress seen.
    private func progressOfUpload(_ body: RequestBody, server: MockServer) async throws -> [TransferProgress] {
        server.stub(.put, "/v1/clips/1", MockResponse.status(204).throttled(bytesPerChunk: 131_072, every: 0.02))
        let (progress, reporter) = TransferProgress.makeStream()
        async let response = server.makeProvider().upload(
            TestEndpoint(path: "/clips/1", method: .put, body: body, timeout: 30), progress: reporter)
        var seen: [TransferProgress] = []
        for await step in progress { seen.append(step) }
        #expect(try await response.statusCode == 204)
        return seen
    }

    /// The progress a user relies on: it rises, and ends with the whole body sent.
    private func expectRisesToTheWholeBody(_ seen: [TransferProgress]) {
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.completedBytes < $1.completedBytes }, "\(seen.map(\.completedBytes))")
        #expect(seen.last?.completedBytes == Int64(Self.size))
        #expect(seen.last?.fraction == 1.0)
        // How many steps a reader sees depends on when its task runs (the stream keeps the newest value only), so
        // the steps themselves are counted where nothing coalesces them: in the session delegate, below.
        #if canImport(FoundationNetworking)
            #expect(seen.allSatisfy { $0.totalBytes == Int64(Self.size) })
        #endif
    }

    #if canImport(FoundationNetworking)
        @Test func theSessionIsToldOfEachChunkSentAsARealUploadTellsIt() async throws {
            // GIVEN a 1 MiB upload through a plain session whose delegate records every report
            let server = MockServer()
            server.stub(.put, "/v1/clips/1", MockResponse.status(204).throttled(bytesPerChunk: 131_072, every: 0.01))
            let recorder = SentBodyRecorder()
            let session = URLSession(configuration: server.makeConfiguration(), delegate: recorder, delegateQueue: nil)
            defer { session.finishTasksAndInvalidate() }
            var request = server.route(URLRequest(url: URL(string: "https://api.example.com/v1/clips/1")!))
            request.httpMethod = "PUT"
            // WHEN it is uploaded
            let done = Signal()
            let status = Recorder<Int>()
            request.httpBody = Data(repeating: 0x5A, count: Self.size)   // (Linux's upload tasks hand a protocol no body)
            session.dataTask(with: request) { _, response, _ in
                status.append((response as? HTTPURLResponse)?.statusCode ?? 0)
                done.fire()
            }.resume()
            await done.wait()
            // THEN the delegate heard of each 128 KiB chunk, rising to the whole body, before the response
            #expect(status.all == [204])
            let sent = recorder.totals.all
            #expect(sent == (1...8).map { Int64($0 * 131_072) }, "\(sent)")
        }
    #endif

    @Test func aDataBodyReportsProgressInSeveralRisingStepsEndingAtTheWholeBody() async throws {
        // GIVEN a 1 MiB body in memory
        let server = MockServer()
        // WHEN it is uploaded, THEN progress rises in several steps to 1.0, and the server got it all
        let seen = try await progressOfUpload(.data(Data(repeating: 0x5A, count: Self.size), contentType: "application/octet-stream"), server: server)
        expectRisesToTheWholeBody(seen)
        #expect(server.requests.first?.body.count == Self.size)
    }

    @Test func aFileBodyReportsProgressInSeveralRisingStepsEndingAtTheWholeBody() async throws {
        // GIVEN a 1 MiB file
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mock-upload-\(UUID().uuidString).bin")
        try Data(repeating: 0xA5, count: Self.size).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let server = MockServer()
        // WHEN it is uploaded, THEN progress rises in several steps to 1.0
        let seen = try await progressOfUpload(.file(file, contentType: "application/octet-stream"), server: server)
        expectRisesToTheWholeBody(seen)
        #expect(server.requests.first?.body.count == Self.size)
    }
}

#if canImport(FoundationNetworking)
    /// A session delegate that records every `didSendBodyData` total, in order.
    private final class SentBodyRecorder: NSObject, URLSessionTaskDelegate, Sendable {
        let totals = Recorder<Int64>()

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
            totalBytesExpectedToSend: Int64
        ) {
            totals.append(totalBytesSent)
        }
    }
#endif
