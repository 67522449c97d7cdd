import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The app's typed error that an envelope failure throws: it carries the code, the message and the status.
struct AppAPIError: Error, Equatable {
    let code: String
    let message: String?
    let statusCode: Int
}

/// `{"divisionCode": "...", "resultMsg": "...", "data": {...}}`: "0000" is a success, "E401" an expired token,
/// "E503" a busy server, "E_REFRESH" a refused refresh token; any other code a plain failure.
struct APIEnvelope: ResponseEnvelope {
    let divisionCode: String
    let resultMsg: String?

    func failure(statusCode: Int) -> EnvelopeFailure? {
        let error = AppAPIError(code: divisionCode, message: resultMsg, statusCode: statusCode)
        switch divisionCode {
        case "0000": return nil
        case "E401": return EnvelopeFailure(error, standsForStatus: 401)
        case "E503": return EnvelopeFailure(error, standsForStatus: 503)
        default: return EnvelopeFailure(error)
        }
    }
}

struct EnvelopedUser: Codable, Equatable {
    let id: Int
    let name: String
}

/// `GET /v1/users/7` on the mock server's default host.
struct EnvelopedUserEndpoint: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
    var path: String { "/users/7" }
    var envelope: EnvelopeFormat? = nil
}

func envelopedProvider(_ server: MockServer, interceptor: (any RequestInterceptor)? = nil, maximumAttempts: Int = 6) -> NetworkProvider {
    NetworkProvider(
        envelope: EnvelopeFormat(APIEnvelope.self), configuration: server.makeConfiguration(basedOn: .ephemeral),
        interceptor: interceptor, maximumAttempts: maximumAttempts, sleep: { _ in })
}

/// The envelope an app declares once: a failure inside a 200 is its typed error, seen while each attempt is
/// validated; the payload decodes from inside it; a body that is not the envelope is a typed decoding error.
@Suite("Envelopes", SuiteTimeLimit.oneMinute)
struct EnvelopeTests {
    @Test func aSuccessEnvelopeDecodesItsPayload() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/7", .json(raw: #"{"divisionCode":"0000","resultMsg":"OK","data":{"id":7,"name":"Lee"}}"#))
        let user = try await envelopedProvider(server).request(EnvelopedUserEndpoint(), as: EnvelopedUser.self)
        #expect(user == EnvelopedUser(id: 7, name: "Lee"))
    }

    @Test func aKeyPathIsReadInsideThePayload() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/7", .json(raw: #"{"divisionCode":"0000","data":{"user":{"id":7,"name":"Lee"}}}"#))
        let user = try await envelopedProvider(server).request(EnvelopedUserEndpoint(), as: EnvelopedUser.self, atKeyPath: "user")
        #expect(user == EnvelopedUser(id: 7, name: "Lee"))
    }

    @Test(arguments: [
        #"{"divisionCode":"0000","resultMsg":"deleted"}"#, #"{"divisionCode":"0000","data":null}"#, #"{"divisionCode":"0000","data":{}}"#,
    ])
    func aSuccessWithoutPayloadDecodesAsEmptyResponse(body: String) async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/7", .json(raw: body))
        let provider = envelopedProvider(server)
        _ = try await provider.request(EnvelopedUserEndpoint(), as: EmptyResponse.self)
        if !body.contains("{}") { #expect(try await provider.request(EnvelopedUserEndpoint(), as: EnvelopedUser?.self) == nil) }
    }

    @Test func aFailureCodeInA200ThrowsTheAppsError() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/7", .json(raw: #"{"divisionCode":"E009","resultMsg":"Not Completed SignUp"}"#))
        let provider = envelopedProvider(server)
        await #expect(throws: AppAPIError(code: "E009", message: "Not Completed SignUp", statusCode: 200)) {
            try await provider.request(EnvelopedUserEndpoint(), as: EnvelopedUser.self)
        }
        // the raw response too: the failure is found while the attempt is validated, not when decoding
        await #expect(throws: AppAPIError(code: "E009", message: "Not Completed SignUp", statusCode: 200)) {
            try await provider.response(EnvelopedUserEndpoint())
        }
    }

    @Test func aFailureInA500BodyThrowsTheAppsErrorWithTheStatus() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/7", .json(raw: #"{"divisionCode":"E500","resultMsg":"DB down"}"#, statusCode: 500))
        await #expect(throws: AppAPIError(code: "E500", message: "DB down", statusCode: 500)) {
            try await envelopedProvider(server).request(EnvelopedUserEndpoint(), as: EnvelopedUser.self)
        }
    }

    @Test func anErrorStatusWhoseBodyIsNoEnvelopeKeepsItsStatus() async throws {
        // A proxy's page: the status decides (RFC 9110 §15.6.3), as without an envelope.
        let server = MockServer()
        server.stub(.get, "/v1/users/7", MockResponse(statusCode: 502, body: Data("<html>Bad Gateway</html>".utf8)))
        await #expect(throws: NetworkError.invalidStatusCode(502)) {
            try await envelopedProvider(server).request(EnvelopedUserEndpoint(), as: EnvelopedUser.self)
        }
    }

    @Test(arguments: [
        (#"{"resultMsg":"OK","data":{"id":7,"name":"Lee"}}"#, "APIEnvelope envelope", "divisionCode"),   // missing code
        (#"{"divisionCode":0,"data":{"id":7,"name":"Lee"}}"#, "APIEnvelope envelope", "divisionCode"),   // wrong type
        (#"{"divisionCode":"0000","data":[1,2]}"#, #"EnvelopedUser at key path "data""#, "data"),   // data of the wrong shape
        (#"{"divisionCode":"0000","data":{"id":"7","name":"Lee"}}"#, #"EnvelopedUser at key path "data""#, "data.id"),
        (#"{"divisionCode":"0000"}"#, #"EnvelopedUser at key path "data""#, "\"data\""),   // payload missing on a success
        (#"{"divisionCode":"0000","data":null}"#, #"EnvelopedUser at key path "data""#, "data"),
        ("null", "APIEnvelope envelope", "top level"),
        ("[]", "APIEnvelope envelope", "top level"),
        ("{not json", "APIEnvelope envelope", "not valid JSON"),
    ])
    func aBadEnvelopeIsATypedDecodingErrorNamingTheField(body: String, type: String, field: String) async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/7", .json(raw: body))
        do {
            let user = try await envelopedProvider(server).request(EnvelopedUserEndpoint(), as: EnvelopedUser.self)
            Issue.record("a bad envelope decoded as \(user)")
        } catch let NetworkError.decodingFailed(name, error) {
            #expect(name == type)
            #expect(NetworkError.decodingFailed(type: name, error: error).description.contains(field))
        }
    }

    @Test func aBadEnvelopeNeverQuotesTheBody() async throws {
        // The description names the field and its coding path, never a value (a token, here).
        let server = MockServer()
        server.stub(.get, "/v1/users/7", .json(raw: #"{"divisionCode":{"accessToken":"secret-token-123"},"data":{"id":7,"name":"Lee"}}"#))
        do {
            _ = try await envelopedProvider(server).request(EnvelopedUserEndpoint(), as: EnvelopedUser.self)
            Issue.record("a bad envelope decoded")
        } catch {
            #expect("\(error)".contains("divisionCode"))
            #expect(!"\(error)".contains("secret-token-123"))
            #expect(!error.localizedDescription.contains("secret-token-123"))
        }
    }

    @Test func aFailureInsideA200IsNeverStoredInTheCache() async throws {
        // RFC 9111 §3 lets a 200 be stored; a failure the envelope reports is no answer to reuse.
        let server = MockServer()
        server.stub(
            .get, "/v1/users/7",
            .json(raw: #"{"divisionCode":"E1"}"#, headers: ["Cache-Control": "max-age=600"]),
            .json(raw: #"{"divisionCode":"0000","data":{"id":7,"name":"Lee"}}"#, headers: ["Cache-Control": "max-age=600"]))
        let provider = NetworkProvider(
            envelope: EnvelopeFormat(APIEnvelope.self), configuration: server.makeConfiguration(basedOn: .ephemeral),
            cache: MemoryResponseCache())
        await #expect(throws: AppAPIError(code: "E1", message: nil, statusCode: 200)) {
            try await provider.request(EnvelopedUserEndpoint(), as: EnvelopedUser.self)
        }
        #expect(try await provider.request(EnvelopedUserEndpoint(), as: EnvelopedUser.self) == EnvelopedUser(id: 7, name: "Lee"))
        #expect(try await provider.request(EnvelopedUserEndpoint(), as: EnvelopedUser.self) == EnvelopedUser(id: 7, name: "Lee"))
        #expect(server.requests.count == 2)   // the success was stored and answered the third call
    }

    @Test func anEndpointNamesItsOwnEnvelopeOrNone() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/7", .json(raw: #"{"id":7,"name":"Lee"}"#))
        var endpoint = EnvelopedUserEndpoint()
        endpoint.envelope = .unwrapped
        #expect(try await envelopedProvider(server).request(endpoint, as: EnvelopedUser.self) == EnvelopedUser(id: 7, name: "Lee"))
        // and a provider without an envelope reads an endpoint's own
        server.stub(.get, "/v1/users/7", .json(raw: #"{"divisionCode":"E1","result":{"id":7,"name":"Lee"}}"#))
        endpoint.envelope = EnvelopeFormat(APIEnvelope.self, payloadKeyPath: "result")
        await #expect(throws: AppAPIError(code: "E1", message: nil, statusCode: 200)) {
            try await server.makeProvider().request(endpoint, as: EnvelopedUser.self)
        }
    }

    @Test func aFailureThatStandsFor503IsRetriedByTheRetryPolicy() async throws {
        // RFC 9110 §15.6.4: 503 is transient; an envelope saying so inside a 200 is retried the same way.
        let server = MockServer()
        server.stub(
            .get, "/v1/users/7", .json(raw: #"{"divisionCode":"E503"}"#), .json(raw: #"{"divisionCode":"0000","data":{"id":7,"name":"Lee"}}"#))
        let provider = envelopedProvider(server, interceptor: RetryPolicy())
        #expect(try await provider.request(EnvelopedUserEndpoint(), as: EnvelopedUser.self) == EnvelopedUser(id: 7, name: "Lee"))
        #expect(server.requests.count == 2)
    }
}
