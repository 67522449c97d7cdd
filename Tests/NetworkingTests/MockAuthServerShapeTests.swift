import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An app whose auth server wraps everything in an envelope and takes the refresh token in a header.
enum EnvelopeApp {
    struct Envelope<Payload: Decodable & Sendable>: Decodable, Sendable {
        let divisionCode: String
        let resultMsg: String
        let data: Payload?
    }

    struct Tokens: Decodable, Sendable {
        let accessToken: String
        let refreshToken: String
        let expiresIn: TimeInterval?
    }

    struct Reissue: Endpoint {
        let baseURL: URL
        let refreshToken: String
        var path: String { "member/token/reissue" }
        var method: HTTPMethod { .put }
        var headers: [String: String] { ["X-Refresh-Token": "Bearer \(refreshToken)"] }
    }

    /// The token protocol as the app's server speaks it: a failed refresh is a 200 with code `E401`.
    static let exchange = MockAuthServer.TokenExchange(
        path: "member/token/reissue", method: .put, refreshToken: .header("X-Refresh-Token", prefix: "Bearer "),
        answer: .init(
            accessTokenField: "data.accessToken", refreshTokenField: "data.refreshToken", expiresInField: "data.expiresIn",
            fixedFields: ["divisionCode": "S000", "resultMsg": "OK"]),
        rejection: .init(statusCode: 200, body: #"{"divisionCode":"E401","resultMsg":"REFRESH_TOKEN_EXPIRED","data":null}"#))

    /// The app's own interceptor: its refresh closure reads the envelope, and a failure code inside it
    /// ends the session (it throws `sessionExpired`, which the interceptor takes as a rejection).
    static func interceptor(baseURL: URL, store: any CredentialStore) -> AuthInterceptor {
        AuthInterceptor(baseURL: baseURL, store: store) { credential, network in
            let envelope = try await network.request(Reissue(baseURL: baseURL, refreshToken: credential.refreshToken), as: Envelope<Tokens>.self)
            guard envelope.divisionCode == "S000", let tokens = envelope.data else { throw NetworkError.sessionExpired }
            return Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken)
        }
    }
}

/// An app speaking OAuth 2.0's refresh grant (RFC 6749 §6): a form body, snake_case answer, 400 `invalid_grant`.
enum OAuthApp {
    struct Tokens: Decodable, Sendable {
        let accessToken: String
        let refreshToken: String

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case refreshToken = "refresh_token"
        }
    }

    struct TokenRequest: Endpoint {
        let baseURL: URL
        let refreshToken: String
        var path: String { "oauth/token" }
        var method: HTTPMethod { .post }
        var body: RequestBody { .form(["grant_type": "refresh_token", "refresh_token": refreshToken]) }
    }

    static let exchange = MockAuthServer.TokenExchange(
        path: "oauth/token", refreshToken: .formField("refresh_token"),
        answer: .init(accessTokenField: "access_token", refreshTokenField: "refresh_token", expiresInField: "expires_in"),
        rejection: .invalidGrant())

    static func interceptor(baseURL: URL, store: any CredentialStore) -> AuthInterceptor {
        AuthInterceptor(baseURL: baseURL, store: store) { credential, network in
            let tokens = try await network.request(TokenRequest(baseURL: baseURL, refreshToken: credential.refreshToken), as: Tokens.self)
            return Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken)
        }
    }
}

@Suite("MockAuthServer speaks the app's token protocol", SuiteTimeLimit.oneMinute)
struct MockAuthServerShapeTests {
    static func provider(_ api: MockAuthServer, _ auth: AuthInterceptor) -> NetworkProvider {
        api.mock.makeProvider(interceptor: auth)
    }

    @Test func theAnswerIsWrittenInTheAppsEnvelope() async throws {
        let api = MockAuthServer(tokenLifetime: 600, tokenExchange: EnvelopeApp.exchange)
        let response = try await Self.provider(api, EnvelopeApp.interceptor(baseURL: api.baseURL, store: InMemoryCredentialStore()))
            .response(api.signIn())
        #expect(
            String(decoding: response.data, as: UTF8.self)
                == #"{"data":{"accessToken":"access-1","expiresIn":600,"refreshToken":"refresh-1"},"divisionCode":"S000","resultMsg":"OK"}"#)
    }

    @Test func anEnvelopeAppRefreshesThroughItsOwnProtocol() async throws {
        // GIVEN the app holds an expired token, and its server speaks its envelope protocol
        let api = MockAuthServer(tokenExchange: EnvelopeApp.exchange)
        let store = InMemoryCredentialStore(MockAuthServer.initialCredential)
        let provider = Self.provider(api, EnvelopeApp.interceptor(baseURL: api.baseURL, store: store))

        // WHEN it calls a protected resource
        let resource = try await provider.request(api.resource("/items/1"), as: MockAuthServer.Resource.self)

        // THEN the refresh went out as the app sends it, and the call was resent with the new token
        #expect(resource.token == "access-1")
        #expect(api.refreshCount == 1)
        let refresh = try #require(api.mock.requests(.put, "/v1/member/token/reissue").first)
        #expect(refresh.header("X-Refresh-Token") == "Bearer refresh-0")
        #expect(try await store.load()?.refreshToken == "refresh-1")
    }

    @Test func aFailureCodeInsideA200EndsTheSession() async throws {
        // GIVEN the server rejects the refresh token with its envelope's failure code, in a 200
        let api = MockAuthServer(tokenExchange: EnvelopeApp.exchange)
        api.setRefreshAnswer(.reject)
        let store = InMemoryCredentialStore(MockAuthServer.initialCredential)
        let provider = Self.provider(api, EnvelopeApp.interceptor(baseURL: api.baseURL, store: store))

        // THEN the call fails with an expired session, and the credential is gone
        await #expect(throws: NetworkError.sessionExpired) {
            try await provider.response(api.resource("/items/1"))
        }
        #expect(api.refreshCount == 1)
        #expect(try await store.load() == nil)
    }

    @Test func anOAuthAppSendsAFormAndReadsSnakeCase() async throws {
        let api = MockAuthServer(tokenExchange: OAuthApp.exchange)
        let store = InMemoryCredentialStore(MockAuthServer.initialCredential)
        let provider = Self.provider(api, OAuthApp.interceptor(baseURL: api.baseURL, store: store))

        let resource = try await provider.request(api.resource("/items/1"), as: MockAuthServer.Resource.self)

        #expect(resource.token == "access-1")
        #expect(api.mock.requests(.post, "/v1/oauth/token").count == 1)
    }

    @Test func aSpentRefreshTokenGetsInvalidGrantAndEndsTheSession() async throws {
        // GIVEN the app holds a refresh token the server already rotated away (RFC 6749 §5.2: 400 invalid_grant)
        let api = MockAuthServer(tokenExchange: OAuthApp.exchange)
        let store = InMemoryCredentialStore(Credential(accessToken: "access-0", refreshToken: "refresh-spent"))
        let provider = Self.provider(api, OAuthApp.interceptor(baseURL: api.baseURL, store: store))

        await #expect(throws: NetworkError.sessionExpired) {
            try await provider.response(api.resource("/items/1"))
        }
        #expect(try await store.load() == nil)
    }

    @Test func theRefreshTokenIsReadFromANestedJSONFieldAndSpentOnce() async throws {
        // GIVEN a server reading the refresh token from `{"auth":{"refresh":…}}`
        let api = MockAuthServer(tokenExchange: .init(refreshToken: .jsonField("auth.refresh")))
        let provider = api.mock.makeProvider()
        let refresh = TestEndpoint(
            baseURL: api.baseURL, path: "auth/refresh", method: .post, body: .json(["auth": ["refresh": "refresh-0"]]),
            acceptableStatusCodes: Set(200..<500), requiresAuthentication: false)

        // WHEN the app spends its refresh token twice
        let first = try await provider.request(refresh, as: MockAuthServer.Tokens.self)
        let second = try await provider.response(refresh)

        // THEN the first rotates, and the spent one gets the default rejection, 401 invalid_grant
        #expect(first.accessToken == "access-1")
        #expect(second.statusCode == 401)
        #expect(String(decoding: second.data, as: UTF8.self) == #"{"error":"invalid_grant"}"#)
    }
}

/// Twin of the snippet in Docs/Testing.md, "MockAuthServer for your token protocol": keep it identical.
@Suite("Docs/Testing.md: the token protocol snippet", SuiteTimeLimit.oneMinute)
struct TokenExchangeDocSnippetTests {
    func appInterceptor(store: any CredentialStore) -> AuthInterceptor {
        EnvelopeApp.interceptor(baseURL: URL(string: "https://api.example.com/v1/")!, store: store)
    }

    @Test func theSnippetRefreshesThroughTheEnvelope() async throws {
        let store = InMemoryCredentialStore(MockAuthServer.initialCredential)
        // {"divisionCode":"S000","resultMsg":"OK","data":{"accessToken":…,"refreshToken":…,"expiresIn":…}}
        let api = MockAuthServer(
            tokenExchange: .init(
                path: "member/token/reissue", method: .put, refreshToken: .header("X-Refresh-Token", prefix: "Bearer "),
                answer: .init(
                    accessTokenField: "data.accessToken", refreshTokenField: "data.refreshToken", expiresInField: "data.expiresIn",
                    fixedFields: ["divisionCode": "S000", "resultMsg": "OK"]),
                rejection: .init(statusCode: 200, body: #"{"divisionCode":"E401","resultMsg":"REFRESH_TOKEN_EXPIRED","data":null}"#)))
        let provider = api.mock.makeProvider(interceptor: appInterceptor(store: store))   // your own AuthInterceptor

        let resource = try await provider.request(api.resource("/items/1"), as: MockAuthServer.Resource.self)
        #expect(resource.token == "access-1")
    }
}
