import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An app whose API, auth server included, answers in its envelope: `"E401"` inside a 200 means the access
/// token expired (it stands for 401, RFC 9110 §15.5.2), `"E_REFRESH"` inside a 200 that the refresh token was refused.
@Suite("Envelopes and authentication", SuiteTimeLimit.oneMinute)
struct EnvelopeAuthTests {
    /// The payload of a protected answer: the token the server saw.
    struct Seen: Codable, Equatable {
        let path: String
        let token: String
    }

    struct Wrapped<Payload: Encodable>: Encodable {
        let divisionCode: String
        let data: Payload
    }

    static let refusal = MockAuthServer.Rejection(statusCode: 200, body: #"{"divisionCode":"E_REFRESH","resultMsg":"refresh token refused"}"#)

    /// The mock API answering in the envelope: tokens in `data`, an expired token as `E401` inside a 200.
    func envelopedAPI(refusal: MockAuthServer.Rejection = EnvelopeAuthTests.refusal) -> MockAuthServer {
        let api = MockAuthServer(
            tokenExchange: MockAuthServer.TokenExchange(
                answer: .init(
                    accessTokenField: "data.accessToken", refreshTokenField: "data.refreshToken", expiresInField: nil,
                    fixedFields: ["divisionCode": "0000"]),
                rejection: refusal))
        api.setProtectedResponses(
            resource: { .json(Wrapped(divisionCode: "0000", data: $0)) },
            expired: .json(raw: #"{"divisionCode":"E401","resultMsg":"token expired"}"#))
        return api
    }

    /// The app's provider and interceptor; the refresh decodes its tokens from the envelope's payload.
    func wire(
        _ api: MockAuthServer, store: InMemoryCredentialStore, rejection: RefreshRejection = .statusRule, retriers: [any RequestRetrier] = []
    ) -> (NetworkProvider, AuthInterceptor) {
        let baseURL = api.baseURL
        let auth = AuthInterceptor(baseURL: baseURL, store: store, rejection: rejection) { credential, network in
            let tokens = try await network.request(
                MockAuthServer.RefreshEndpoint(baseURL: baseURL, refreshToken: credential.refreshToken), as: MockAuthServer.Tokens.self)
            return Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken)
        }
        let provider = NetworkProvider(
            envelope: EnvelopeFormat(APIEnvelope.self), configuration: api.mock.makeConfiguration(basedOn: .ephemeral),
            interceptor: Interceptor(adapters: [auth], retriers: [auth] + retriers), sleep: { _ in })
        return (provider, auth)
    }

    @Test func anExpiredTokenInsideA200RefreshesOnceAndResends() async throws {
        let api = envelopedAPI()
        let (provider, _) = wire(api, store: InMemoryCredentialStore(MockAuthServer.initialCredential))
        let seen = try await provider.request(api.resource("/items/1"), as: Seen.self)
        #expect(seen == Seen(path: "/v1/items/1", token: "access-1"))
        #expect(api.refreshCount == 1)
    }

    @Test func a200FailureA401RefreshAndARetryCross() async throws {
        // GIVEN /items/1 answering, in turn: "busy" inside a 200 (stands for 503), a 401 for the old token whose
        // body is the envelope's "token expired", then the item; and a RetryPolicy after the interceptor
        let api = envelopedAPI()
        let calls = Counter()
        api.mock.stub(.get, "/v1/items/1") { request in
            switch calls.next() {
            case 1: return .json(raw: #"{"divisionCode":"E503","resultMsg":"busy"}"#)
            case 2: return .json(raw: #"{"divisionCode":"E401","resultMsg":"token expired"}"#, statusCode: 401)
            default: return .json(Wrapped(divisionCode: "0000", data: Seen(path: request.path, token: request.header("Authorization") ?? "")))
            }
        }
        let (provider, auth) = wire(api, store: InMemoryCredentialStore(MockAuthServer.initialCredential), retriers: [RetryPolicy()])
        // WHEN the app asks for it, THEN it is retried (503), refreshed once (401) and resent with the new token
        let seen = try await provider.request(api.resource("/items/1"), as: Seen.self)
        #expect(seen.token == "Bearer access-1")
        #expect(api.refreshCount == 1)
        #expect(calls.value == 3)
        #expect(try await auth.currentCredential()?.accessToken == "access-1")
    }

    @Test func aRefusalInsideA200DuringAStormEndsTheSessionOnce() async throws {
        // GIVEN 500 calls whose token expired, and an auth server refusing the refresh token inside a 200
        // ("E_REFRESH" names no status: the app judges it a rejection with RefreshRejection.statusRule(or:))
        let api = envelopedAPI()
        api.setRefreshAnswer(.reject)
        let store = InMemoryCredentialStore(MockAuthServer.initialCredential)
        let (provider, auth) = wire(api, store: store, rejection: .statusRule(or: { ($0 as? AppAPIError)?.code == "E_REFRESH" }))
        let events = auth.events()
        let endings = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<500 {
                group.addTask {
                    do {
                        _ = try await provider.request(api.resource("/items/\(index)"), as: Seen.self)
                        return false
                    } catch NetworkError.sessionExpired {
                        return true
                    }
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        // THEN one refresh, every call ended once with the session error, the store is cleared, and the app is told once
        #expect(endings.count == 500)
        #expect(endings.allSatisfy { $0 })
        #expect(api.refreshCount == 1)
        #expect(try await store.load() == nil)
        // (a marker after it: sign in again and refresh once more)
        try await auth.signIn(with: Credential(accessToken: "stale", refreshToken: "refresh-0"))
        api.setRefreshAnswer(.rotate)
        _ = try await provider.request(api.resource("/items/marker"), as: Seen.self)
        var seen: [String] = []
        for await event in events {
            seen.append("\(event)")
            if case .refreshSucceeded = event { break }
        }
        #expect(seen == ["refreshStarted", "sessionExpired", "refreshStarted", "refreshSucceeded"])
    }

    @Test func aRefusalInsideA200ThatStandsFor401EndsTheSessionByTheStatusRule() async throws {
        // An envelope failure standing for 401 counts as the refresh's status (RFC 6749 §5.2's rejections)
        let api = envelopedAPI(refusal: MockAuthServer.Rejection(statusCode: 200, body: #"{"divisionCode":"E401"}"#))
        api.setRefreshAnswer(.reject)
        let store = InMemoryCredentialStore(MockAuthServer.initialCredential)
        let (provider, _) = wire(api, store: store)
        await #expect(throws: NetworkError.sessionExpired) { try await provider.request(api.resource("/items/1"), as: Seen.self) }
        #expect(try await store.load() == nil)
    }

    @Test func statusRuleOrAddsToTheStatusRule() async throws {
        // GIVEN the guide's interceptor, whose rejection names the app's own code in addition to the status rule, and an auth server that
        // answers a plain 401 invalid_grant (RFC 6749 §5.2), which the app's error mapper does not recognise
        let api = MockAuthServer()
        api.setRefreshAnswer(.reject)
        let baseURL = api.baseURL
        let store = InMemoryCredentialStore(MockAuthServer.initialCredential)
        let auth = AuthInterceptor(
            baseURL: baseURL, store: store,
            rejection: .statusRule(or: { ($0 as? AppAPIError)?.code == "E_REFRESH" }),
            refresh: { credential, network in
                let tokens = try await network.request(
                    MockAuthServer.RefreshEndpoint(baseURL: baseURL, refreshToken: credential.refreshToken), as: MockAuthServer.Tokens.self)
                return Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken)
            })
        let provider = api.mock.makeProvider(interceptor: auth)
        // WHEN a call needs a refresh, THEN the session ends (only(_:) would replace the status rule: refreshFailed)
        await #expect(throws: NetworkError.sessionExpired) { try await provider.response(api.resource("/items/1")) }
        #expect(try await store.load() == nil)
    }

    @Test func onlyReplacesTheStatusRule() async throws {
        // GIVEN an app that says a 401 from its auth server is transient
        let api = MockAuthServer()
        api.setRefreshAnswer(.reject)
        let store = InMemoryCredentialStore(MockAuthServer.initialCredential)
        let (provider, _) = wire(api, store: store, rejection: .only { _ in false })
        // WHEN a call needs a refresh, THEN it fails as a failed refresh, and the credential is kept
        await #expect { try await provider.response(api.resource("/items/1")) } throws: { error in
            if case NetworkError.refreshFailed = error { return true } else { return false }
        }
        #expect(try await store.load() == MockAuthServer.initialCredential)
    }

    @Test func anE401AfterASuccessfulRefreshIsThrownWithoutAnotherRefresh() async throws {
        // GIVEN an API that answers "token expired" inside a 200 whatever token it gets, even a fresh one
        let api = envelopedAPI()
        api.mock.stub(.get, "/v1/items/1", .json(raw: #"{"divisionCode":"E401","resultMsg":"token expired"}"#))
        let (provider, _) = wire(api, store: InMemoryCredentialStore(MockAuthServer.initialCredential), retriers: [RetryPolicy()])
        // WHEN the app asks, THEN one refresh, one resend, and the app's error: no refresh loop
        await #expect(throws: AppAPIError(code: "E401", message: "token expired", statusCode: 200)) {
            try await provider.request(api.resource("/items/1"), as: Seen.self)
        }
        #expect(api.refreshCount == 1)
        #expect(api.mock.requests(.get, "/v1/items/1").count == 2)
    }

    @Test func aPlainOAuthTokenEndpointIsUnwrapped() async throws {
        // GIVEN a standard OAuth token server (RFC 6749 §5.1: the tokens at the top level) behind a provider
        // whose API answers are wrapped
        struct PlainTokenRefresh: Endpoint {
            let call: MockAuthServer.RefreshEndpoint
            var baseURL: URL { call.baseURL }
            var path: String { call.path }
            var method: HTTPMethod { call.method }
            var body: RequestBody { call.body }
            var envelope: EnvelopeFormat? { .unwrapped }   // its answers have no envelope
        }
        let api = MockAuthServer()
        api.setProtectedResponses(
            resource: { .json(Wrapped(divisionCode: "0000", data: $0)) },
            expired: .json(raw: #"{"divisionCode":"E401","resultMsg":"token expired"}"#))
        let baseURL = api.baseURL
        let auth = AuthInterceptor(baseURL: baseURL, store: InMemoryCredentialStore(MockAuthServer.initialCredential)) { credential, network in
            let call = MockAuthServer.RefreshEndpoint(baseURL: baseURL, refreshToken: credential.refreshToken)
            let tokens = try await network.request(PlainTokenRefresh(call: call), as: MockAuthServer.Tokens.self)
            return Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken)
        }
        let provider = NetworkProvider(
            envelope: EnvelopeFormat(APIEnvelope.self), configuration: api.mock.makeConfiguration(basedOn: .ephemeral), interceptor: auth)
        // WHEN a call needs a refresh, THEN the plain token answer is read and the call resent
        #expect(try await provider.request(api.resource("/items/1"), as: Seen.self) == Seen(path: "/v1/items/1", token: "access-1"))
        #expect(api.refreshCount == 1)
    }
}

/// A thread-safe count of calls.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    /// Counts one more and returns the count.
    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}
