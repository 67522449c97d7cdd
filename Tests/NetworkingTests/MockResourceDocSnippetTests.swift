// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets of "Testing resumable downloads with MockResource" in Docs/Testing.md: keep each
// identical to the page.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

// The page's endpoint.

enum VideoAPI: Endpoint {
    case intro

    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/videos/intro.mp4" }
    var method: HTTPMethod { .get }
}

@Suite("Docs/Testing.md: resumable downloads with MockResource", SuiteTimeLimit.oneMinute)
struct MockResourceDocSnippetTests {
    @Test func aDroppedDownloadResumesWhereItStopped() async throws {
        let video = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0) })
        let file = MockResource(body: video, etag: #""v1""#)
        let server = MockServer()
        server.stub(.get, "/v1/videos/intro.mp4") { request in
            let answer = file.response(to: request)
            guard request.header("Range") == nil else { return answer }          // a resumption: the resource answers
            return .chunked([answer.body.prefix(6_000)], headers: answer.headers,  // else cut after 6,000 bytes
                            failingWith: URLError(.networkConnectionLost))
        }
        let provider = server.makeProvider(interceptor: RetryPolicy(retryLimit: 2), sleep: RecordedDelays().sleep)
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: destination) }

        _ = try await provider.download(VideoAPI.intro, to: destination)

        #expect(server.requests.last?.header("Range") == "bytes=6000-")
        #expect(server.requests.last?.header("If-Range") == #""v1""#)
        #expect(file.partialResponses == 1)                                     // resumed with a 206, not restarted
        #expect(try Data(contentsOf: destination) == video)
    }

    @Test func theSpliceCase() async throws {
        let video = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0) })
        let newVideo = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let file = MockResource(body: video, etag: #""v1""#)
        file.rangeBehaviour = .ignoringIfRange
        let cut = DocSnippetOnce()
        let server = MockServer()
        server.stub(.get, "/v1/videos/intro.mp4") { request in
            let answer = file.response(to: request)
            guard cut.first() else { return answer }
            file.update(body: newVideo, etag: #""v2""#)
            return .chunked([answer.body.prefix(6_000)], headers: answer.headers, failingWith: URLError(.networkConnectionLost))
        }
        let provider = server.makeProvider(interceptor: RetryPolicy(retryLimit: 2), sleep: RecordedDelays().sleep)
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: destination) }

        _ = try await provider.download(VideoAPI.intro, to: destination)

        #expect(server.requests.map { $0.header("Range") } == [nil, "bytes=6000-", nil])
        #expect(file.partialResponses == 1)
        #expect(try Data(contentsOf: destination) == newVideo)
    }

    @Test func theOptionsCombine() {
        let file = MockResource(body: Data(0..<10), etag: #""v1""#)
        file.rangeBehaviour = MockResource.RangeBehaviour(maximumRangeLength: 2_000, omitsCompleteLength: true)
        #expect(file.rangeBehaviour == MockResource.RangeBehaviour(maximumRangeLength: 2_000, omitsCompleteLength: true))
        #expect(MockResource.RangeBehaviour.capped(at: 2_000).maximumRangeLength == 2_000)
        #expect(MockResource.RangeBehaviour.honoured == MockResource.RangeBehaviour())
    }
}

/// True the first time it is asked, then false.
private final class DocSnippetOnce: @unchecked Sendable {
    // @unchecked: `asked` is guarded by `lock`.
    private let lock = NSLock()
    private var asked = false

    func first() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        defer { asked = true }
        return !asked
    }
}
