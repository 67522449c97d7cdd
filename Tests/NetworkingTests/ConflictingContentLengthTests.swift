import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `GET` whose answer declares its length.
private struct Declared: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/declared" }
}

/// A `HEAD` of the same resource.
private struct HeadDeclared: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/declared" }
    var method: HTTPMethod { .head }
}

/// RFC 9112 §6.3 (5): a response whose `Content-Length` is invalid, such as a list of different lengths
/// (`Content-Length: 77, 5`, two header lines that disagree), has no framing a client can trust: the user agent
/// "MUST close the connection to the server and discard the received response". libcurl reads the last value and
/// hands over that many bytes, so without this check a call returned a cut body as a success.
@Suite("Conflicting Content-Length (RFC 9112 §6.3)", SuiteTimeLimit.oneMinute)
struct ConflictingContentLengthTests {
    @Test func aResponseWithDifferentContentLengthsIsDiscardedNotReturned() async throws {
        // GIVEN an answer whose two Content-Length lines disagree (URLSession joins them: "77, 5")
        let server = MockServer()
        server.stub(.get, "/v1/declared", MockResponse(statusCode: 200, headers: ["Content-Length": "77, 5"], body: Data("{\"a\":".utf8)))
        // WHEN it is read, THEN the call fails as a response that cannot be parsed, never a success with 5 bytes
        await #expect(throws: NetworkError.transportFailed(URLError(.cannotParseResponse))) {
            try await server.makeProvider().response(Declared())
        }
    }

    @Test func aContentLengthThatIsNotANumberIsDiscarded() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/declared", MockResponse(statusCode: 200, headers: ["Content-Length": "5 bytes"], body: Data("hello".utf8)))
        await #expect(throws: NetworkError.transportFailed(URLError(.cannotParseResponse))) {
            try await server.makeProvider().response(Declared())
        }
    }

    @Test func theSameLengthTwiceIsOneLength() async throws {
        // GIVEN "Content-Length: 5, 5" (RFC 9110 §8.6: a recipient may take repeated identical values as one)
        let server = MockServer()
        server.stub(.get, "/v1/declared", MockResponse(statusCode: 200, headers: ["Content-Length": "5, 5"], body: Data("hello".utf8)))
        // WHEN it is read, THEN the body is the call's
        let response = try await server.makeProvider().response(Declared())
        #expect(response.data == Data("hello".utf8))
    }

    @Test func aSingleLengthIsAccepted() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/declared", MockResponse(statusCode: 200, headers: ["Content-Length": " 5 "], body: Data("hello".utf8)))
        let response = try await server.makeProvider().response(Declared())
        #expect(response.data == Data("hello".utf8))
    }

    @Test func aDownloadWithDifferentContentLengthsWritesNothing() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/declared", MockResponse(statusCode: 200, headers: ["Content-Length": "77, 5"], body: Data("hello".utf8)))
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("conflicting-\(UUID().uuidString)")
        await #expect(throws: NetworkError.transportFailed(URLError(.cannotParseResponse))) {
            try await server.makeProvider().download(Declared(), to: destination)
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test func aHeadAnswerIsNotFramedByItsContentLength() async throws {
        // GIVEN an answer to HEAD, which has no body whatever it declares (RFC 9112 §6.3 (1))
        let server = MockServer()
        server.stub(.head, "/v1/declared", MockResponse(statusCode: 200, headers: ["Content-Length": "77, 5"]))
        // THEN its fields are the server's business: the call succeeds
        let response = try await server.makeProvider().response(HeadDeclared())
        #expect(response.statusCode == 200)
    }

    @Test func aStreamWithDifferentContentLengthsFails() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/declared", MockResponse(statusCode: 200, headers: ["Content-Length": "77, 5"], body: Data("{\"a\":".utf8)))
        await #expect(throws: NetworkError.transportFailed(URLError(.cannotParseResponse))) {
            let stream = try await server.makeProvider().stream(Declared())
            for try await _ in stream {}
        }
    }
}
