import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `GET` whose answer may be cut short.
private struct CutFeed: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/feed" }
}

/// The first 40 bytes of a 100-byte body that declares its length, then the connection is gone, reported with
/// `error` (Linux's URLSession says `URLError.unknown`, -1; Apple's says `networkConnectionLost`).
private func cutShort(failingWith error: URLError, headers: [String: String] = [:]) -> MockResponse {
    .chunked(
        [Data(repeating: 0x61, count: 40)], statusCode: 200, headers: headers.merging(["Content-Length": "100"]) { own, _ in own },
        failingWith: error)
}

/// A body cut short after its headers arrived is a lost connection on every platform, for every kind of call, as
/// `MockResponse.closingAfter(bytes:)` and the Testing guide promise: a `RetryPolicy` retries it (RFC 9110 §9.2.2: a
/// `GET` is idempotent), and an app's `catch … where error.code == .networkConnectionLost` sees it against a real
/// server on Linux too, not only against the mock.
@Suite("A body cut short is a lost connection", SuiteTimeLimit.oneMinute)
struct CutShortBodyTests {
    #if canImport(FoundationNetworking)
        @Test func aPlainCallsBodyCutShortThatLinuxReportsAsUnknownIsALostConnection() async throws {
            // GIVEN a server whose connection closes mid-body, which URLSession on Linux reports as URLError(.unknown)
            let server = MockServer()
            server.stub(.get, "/v1/feed", cutShort(failingWith: URLError(.unknown)))
            // WHEN a plain call reads it, THEN it fails as a lost connection, as on Apple platforms
            await #expect(throws: NetworkError.transportFailed(URLError(.networkConnectionLost))) {
                try await server.makeProvider().response(CutFeed())
            }
        }

        @Test func aRetryPolicyRetriesAPlainCallWhoseBodyWasCutShortOnLinux() async throws {
            // GIVEN a body cut short once (Linux: URLError.unknown), then sent whole
            let server = MockServer()
            let whole = Data(repeating: 0x61, count: 100)
            server.stub(.get, "/v1/feed", cutShort(failingWith: URLError(.unknown)), MockResponse(statusCode: 200, body: whole))
            // WHEN the call has the default retry policy
            let provider = server.makeProvider(interceptor: RetryPolicy(), sleep: RecordedDelays().sleep)
            let response = try await provider.response(CutFeed())
            // THEN the policy retried the lost connection, and the second answer is the call's
            #expect(response.data == whole)
            #expect(response.report.attempts == 2)
        }

        @Test func aStreamCutShortThatLinuxReportsAsUnknownEndsAsALostConnection() async throws {
            // GIVEN a streamed answer whose connection closes mid-body (Linux: URLError.unknown)
            let server = MockServer()
            server.stub(.get, "/v1/feed", cutShort(failingWith: URLError(.unknown)))
            // WHEN it is read as a stream, THEN the stream ends with a lost connection after the bytes that came
            let stream = try await server.makeProvider().stream(CutFeed())
            var received = 0
            await #expect(throws: NetworkError.transportFailed(URLError(.networkConnectionLost))) {
                for try await chunk in stream { received += chunk.count }
            }
            #expect(received == 40)
        }

        @Test func anEncodedBodyThatFailsKeepsLinuxsUnknownError() async throws {
            // GIVEN a gzip body that fails (a decoding error and a drop both look like URLError.unknown on Linux)
            let server = MockServer()
            server.stub(.get, "/v1/feed", cutShort(failingWith: URLError(.unknown), headers: ["Content-Encoding": "gzip"]))
            // WHEN it is read, THEN the error stays what URLSession said: it may be a body that can never decode
            await #expect(throws: NetworkError.transportFailed(URLError(.unknown))) {
                try await server.makeProvider().response(CutFeed())
            }
        }
    #endif

    @Test func aFailureBeforeAnyResponseKeepsItsCode() async throws {
        // GIVEN a request that gets no response at all
        let server = MockServer()
        server.stub(.get, "/v1/feed", .failure(URLError(.unknown)))
        // WHEN it is sent, THEN nothing is made up: no body was cut short
        await #expect(throws: NetworkError.transportFailed(URLError(.unknown))) {
            try await server.makeProvider().response(CutFeed())
        }
    }
}
