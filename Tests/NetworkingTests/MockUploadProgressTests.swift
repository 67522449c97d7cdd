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
        #if canImport(FoundationNetworking)
            // Several steps, not one [1.0] at the end (on Apple platforms the mock cannot reach the session).
            #expect(seen.count >= 2, "\(seen.map(\.completedBytes))")
            #expect(seen.allSatisfy { $0.totalBytes == Int64(Self.size) })
        #endif
    }

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
