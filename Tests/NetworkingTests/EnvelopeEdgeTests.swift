import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An endpoint of the enveloped API at `path`, with its method and acceptable statuses.
private struct EnvelopedCall: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
    let path: String
    var method: HTTPMethod = .get
    var acceptableStatusCodes: Set<Int> = Set(200..<300)
    var redirectBehavior: RedirectBehavior? = nil
}

/// Answers the envelope does not wrap, and answers reached another way: no body, a body not in memory, a
/// redirect, an accepted 3xx.
@Suite("Envelopes: bodiless, transferred and redirected answers", SuiteTimeLimit.oneMinute)
struct EnvelopeEdgeTests {
    @Test("a HEAD answer and a 204 have no body to read (RFC 9110 §9.3.2, §15.3.5): EmptyResponse")
    func headAnd204HaveNoEnvelope() async throws {
        let server = MockServer()
        server.stub(.head, "/v1/users/7", .status(200, headers: ["Content-Length": "42"]))
        server.stub(.delete, "/v1/users/7", .status(204))
        let provider = envelopedProvider(server)
        _ = try await provider.request(EnvelopedCall(path: "/users/7", method: .head), as: EmptyResponse.self)
        _ = try await provider.request(EnvelopedCall(path: "/users/7", method: .delete), as: EmptyResponse.self)
        #expect(try await provider.request(EnvelopedCall(path: "/users/7", method: .delete), as: EnvelopedUser?.self) == nil)
    }

    @Test func aDownloadsAndAStreamsSuccessBodiesAreNotRead() async throws {
        let server = MockServer()
        let bytes = Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF])   // a PNG's start: no envelope
        server.stub(.get, "/v1/files/1", MockResponse(body: bytes))
        server.stub(.get, "/v1/events", MockResponse(body: Data("data: one\n\ndata: two\n\n".utf8)))
        let provider = envelopedProvider(server)
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("envelope-\(UUID().uuidString).png")
        defer { try? FileManager.default.removeItem(at: destination) }
        _ = try await provider.download(EnvelopedCall(path: "/files/1"), to: destination)
        #expect(try Data(contentsOf: destination) == bytes)
        var lines: [String] = []
        for try await line in try await provider.stream(EnvelopedCall(path: "/events")).lines { lines.append(line) }
        #expect(lines.filter { !$0.isEmpty } == ["data: one", "data: two"])
    }

    @Test("a redirected answer is read through the envelope at its final hop (RFC 9110 §15.4.3)")
    func aRedirectedAnswerIsReadThroughTheEnvelope() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/7", .status(302, headers: ["Location": "/v1/users/8"]))
        server.stub(.get, "/v1/users/8", .json(raw: #"{"divisionCode":"0000","data":{"id":8,"name":"Kim"}}"#))
        let provider = envelopedProvider(server)
        #expect(try await provider.request(EnvelopedCall(path: "/users/7"), as: EnvelopedUser.self) == EnvelopedUser(id: 8, name: "Kim"))
        server.stub(.get, "/v1/users/8", .json(raw: #"{"divisionCode":"E9","resultMsg":"gone"}"#))
        await #expect(throws: AppAPIError(code: "E9", message: "gone", statusCode: 200)) {
            try await provider.request(EnvelopedCall(path: "/users/7"), as: EnvelopedUser.self)
        }
    }

    @Test("an accepted 3xx that is not followed is no envelope answer: its HTML body is not read (RFC 9110 §15.4)")
    func anAcceptedRedirectIsNotRead() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/login", MockResponse(statusCode: 302, headers: ["Location": "/v1/home"], body: Data("<html>moved</html>".utf8)))
        let endpoint = EnvelopedCall(path: "/login", acceptableStatusCodes: Set(200..<400), redirectBehavior: .doNotFollow)
        let response = try await envelopedProvider(server).response(endpoint)
        #expect(response.statusCode == 302)
    }
}
