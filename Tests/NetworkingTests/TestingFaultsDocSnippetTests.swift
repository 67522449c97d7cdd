// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in Docs/Testing.md's "Faults" and "Upload progress through the mock": keep each identical to the page.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

@Suite("Testing doc snippets: faults", SuiteTimeLimit.oneMinute)
struct TestingFaultsDocSnippetTests {
    @Test func theFaultsSection() async throws {
        let server = MockServer()
        let provider = server.makeProvider(maximumAttempts: 1)
        var printed = ""
        func print(_ text: String) { printed = text }

        server.stub(.get, "/v1/players/7", MockResponse.json(Player(id: 7, name: "Kim")).closingAfter(bytes: 10))
        server.stub(.get, "/v1/players/8", MockResponse.json(Player(id: 8, name: "Lee")).stallingBeforeHeaders())
        server.stub(.get, "/v1/players/9", MockResponse.json(Player(id: 9, name: "Ana")).throttled(bytesPerChunk: 8, every: 0.02))

        do {
            _ = try await provider.request(PlayerAPI.player(id: 7), as: Player.self)
        } catch NetworkError.transportFailed(let error) where error.code == .networkConnectionLost {
            print("connection lost mid-body")
        }

        #expect(printed == "connection lost mid-body")
        #expect(try await provider.request(PlayerAPI.player(id: 9), as: Player.self) == Player(id: 9, name: "Ana"))
        let stalled = Task { try await provider.request(PlayerAPI.player(id: 8), as: Player.self) }
        _ = try await server.nextRequest(matching: .get, "/v1/players/8")
        stalled.cancel()
        await #expect(throws: NetworkError.cancelled) { _ = try await stalled.value }
    }

    @Test func theUploadProgressSection() async throws {
        let server = MockServer()
        let provider = server.makeProvider()
        var fractions: [Double] = []
        func print(_ fraction: Double) { fractions.append(fraction) }

        struct PhotoUpload: Endpoint {
            let photo: Data
            var baseURL: URL { URL(string: "https://api.example.com/v1")! }
            var path: String { "/players/7/photo" }
            var method: HTTPMethod { .put }
            var body: RequestBody { .data(photo, contentType: "image/jpeg") }
        }
        server.stub(.put, "/v1/players/7/photo", MockResponse.status(204).throttled(bytesPerChunk: 131_072, every: 0.02))

        let (progress, reporter) = TransferProgress.makeStream()
        async let response = provider.upload(PhotoUpload(photo: Data(count: 1 << 20)), progress: reporter)
        for await step in progress {
            print(step.fraction ?? 0)            // 0.125, 0.25, … 1.0
        }
        _ = try await response

        #expect(fractions.last == 1.0)
        #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 < $1 })
    }
}
