import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `GET /v1/users/7` with the statuses and cache policy a test gives.
private struct StatusUserEndpoint: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
    var path: String { "/users/7" }
    var headers: [String: String] = [:]
    var acceptableStatusCodes: Set<Int> = Set(200..<300)
    var cachePolicy: CachePolicy?
}

/// Envelopes where they meet ranges (RFC 9110 §14.2, §15.3.7) and the cache's answers (RFC 9111 §4).
@Suite("Envelopes with partial content and cache answers", SuiteTimeLimit.oneMinute)
struct EnvelopeCacheAnswerTests {
    let server = MockServer()
    let clock = ManualClock()
    let store = MemoryResponseCache()

    var provider: NetworkProvider {
        NetworkProvider(
            envelope: EnvelopeFormat(APIEnvelope.self), configuration: server.makeConfiguration(basedOn: .ephemeral), cache: store, now: clock.now)
    }

    @Test("RFC 9110 §15.3.7: the server's 206 to an app's Range request is a part of the representation, not an envelope: not read")
    func partialContentIsNotRead() async throws {
        server.stub(.get, "/v1/users/7", MockResponse(statusCode: 206, headers: ["Content-Range": "bytes 0-7/60"], body: Data(#"{"divisi"#.utf8)))
        let response = try await provider.response(StatusUserEndpoint(headers: ["Range": "bytes=0-7"]))
        #expect(response.statusCode == 206)
        #expect(response.data == Data(#"{"divisi"#.utf8))
    }

    @Test(
        "RFC 9111 §4: cachedThenFresh under cacheOnly or only-if-cached throws the stored answer's envelope error, as response(_:) does",
        arguments: [
            StatusUserEndpoint(cachePolicy: .cacheOnly), StatusUserEndpoint(headers: ["Cache-Control": "only-if-cached"]),
        ])
    fileprivate func cachedThenFreshThrowsTheEnvelopeError(_ endpoint: StatusUserEndpoint) async throws {
        // GIVEN a 404 envelope stored by an endpoint that accepts 404
        server.stub(.get, "/v1/users/7", .json(raw: #"{"divisionCode":"E404","resultMsg":"gone"}"#, statusCode: 404, headers: ["Cache-Control": "max-age=600"]))
        _ = try await provider.response(StatusUserEndpoint(acceptableStatusCodes: [200, 404]))
        let expected = AppAPIError(code: "E404", message: "gone", statusCode: 404)
        // WHEN an endpoint that rejects 404 is answered by it without the network
        await #expect(throws: expected) { try await provider.response(endpoint) }
        // THEN cachedThenFresh throws the same error
        await #expect(throws: expected) {
            for try await _ in provider.cachedThenFresh(endpoint, as: EnvelopedUser.self) {}
        }
        #expect(server.requests.count == 1)
    }
}
