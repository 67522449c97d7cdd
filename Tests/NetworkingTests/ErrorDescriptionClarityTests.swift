import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a newcomer reads when a call fails: the description names what went wrong in words, and the symbol to
/// switch on, never only a number; and it stays free of secrets (no URL, no header, no body).
@Suite("Error descriptions a newcomer can act on", SuiteTimeLimit.oneMinute)
struct ErrorDescriptionClarityTests {
    @Test func aTransportFailureNamesItsURLErrorCode() {
        let lost = NetworkError.transportFailed(URLError(.networkConnectionLost)).description
        #expect(lost == "The request failed without a complete response: URLError -1005 (.networkConnectionLost).")
        let badAnswer = NetworkError.transportFailed(URLError(.badServerResponse)).description
        #expect(badAnswer == "The request failed without a complete response: URLError -1011 (.badServerResponse).")
    }

    @Test func aCodeWithoutANameKeepsItsNumber() {
        let odd = NetworkError.transportFailed(URLError(.backgroundSessionWasDisconnected)).description
        #expect(odd == "The request failed without a complete response: URLError -997.")
    }

    @Test func aTransportFailureNeverShowsItsFailingURL() {
        let url = "https://api.example.com/v1/me?access_token=s3cr3t"
        let error = NetworkError.transportFailed(
            URLError(.timedOut, userInfo: [NSURLErrorFailingURLErrorKey: URL(string: url) as Any, NSLocalizedDescriptionKey: url]))
        #expect(!error.description.contains("s3cr3t"))
        #expect(error.description.contains("(.timedOut)"))
    }

    @Test func aBodyThatIsNotJSONSaysSo() async throws {
        // GIVEN a captive portal's HTML page where the API's JSON was expected
        let server = MockServer()
        server.stub(.get, "/v1/users/7", MockResponse(statusCode: 200, headers: ["Content-Type": "text/html"], body: Data("<html>".utf8)))
        // WHEN it is decoded, THEN the description says the body is not JSON, not only "data corrupted"
        await #expect {
            _ = try await server.makeProvider().request(NewcomerUser(), as: [String: Int].self)
        } throws: { error in
            "\(error)" == "The response could not be decoded as Dictionary<String, Int>: the body is not valid JSON."
        }
    }

    @Test func aTypesOwnCorruptionAtTheTopLevelIsNotCalledInvalidJSON() async throws {
        // GIVEN valid JSON that a type refuses at the top level with its own dataCorrupted error
        let server = MockServer()
        server.stub(.get, "/v1/users/7", .json(raw: "42"))
        await #expect {
            _ = try await server.makeProvider().request(NewcomerUser(), as: Refusing.self)
        } throws: { error in
            "\(error)" == "The response could not be decoded as Refusing: data corrupted at the top level."
        }
    }

    @Test func aValueThatIsNotJSONAtItsPlaceKeepsItsCodingPath() async throws {
        // GIVEN valid JSON whose value has the wrong type: a type mismatch with its path, as before
        let server = MockServer()
        server.stub(.get, "/v1/users/7", .json(raw: #"{"id":"seven"}"#))
        await #expect {
            _ = try await server.makeProvider().request(NewcomerUser(), as: [String: Int].self)
        } throws: { error in
            "\(error)".hasSuffix("type mismatch for Int at id.")
        }
    }
}

/// A type that refuses every value, as a custom `init(from:)` does when a value is out of its range.
private struct Refusing: Decodable {
    init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer()
        throw DecodingError.dataCorruptedError(in: value, debugDescription: "out of range")
    }
}

private struct NewcomerUser: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/users/7" }
}
