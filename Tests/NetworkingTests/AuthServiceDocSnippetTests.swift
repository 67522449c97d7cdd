// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in Docs/Authentication.md, section 7 (client credentials): keep each identical to the page.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

struct ServiceToken: Endpoint {
    var baseURL: URL { URL(string: "https://auth.example.com")! }
    var path: String { "/oauth/token" }
    var method: HTTPMethod { .post }
    var body: RequestBody {
        .form([
            URLQueryItem(name: "grant_type", value: "client_credentials"),
            URLQueryItem(name: "client_id", value: "orders-service"),
            URLQueryItem(name: "client_secret", value: ProcessInfo.processInfo.environment["CLIENT_SECRET"] ?? ""),
        ])
    }
    var requiresAuthentication: Bool { false }

    private struct Answer: Decodable {
        let access_token: String
        let expires_in: TimeInterval?
    }

    static func fetch(with network: any NetworkProviding) async throws -> Credential {
        let answer = try await network.request(ServiceToken(), as: Answer.self)
        return Credential(
            accessToken: answer.access_token, refreshToken: "",
            expiresAt: answer.expires_in.map { Date().addingTimeInterval($0) })
    }
}

/// The page's `makeServiceProvider()`, with the provider made by the test's mock (the page's builds its own session).
func makeServiceProvider(on server: MockServer) async throws -> NetworkProvider {
    let auth = AuthInterceptor(
        baseURL: URL(string: "https://api.example.com/v1")!,
        rejection: .only { _ in false }   // a refused token request never signs the service out
    ) { _, network in
        try await ServiceToken.fetch(with: network)
    }
    let provider = server.makeProvider(interceptor: Interceptor(adapters: [auth], retriers: [auth, RetryPolicy()]), sleep: RecordedDelays().sleep)
    try await auth.signIn(with: ServiceToken.fetch(with: provider))   // at startup: the first token
    return provider
}

/// The page's snippet as written, compiled only.
func makeServiceProvider() async throws -> NetworkProvider {
    let auth = AuthInterceptor(
        baseURL: URL(string: "https://api.example.com/v1")!,
        rejection: .only { _ in false }   // a refused token request never signs the service out
    ) { _, network in
        try await ServiceToken.fetch(with: network)
    }
    let provider = NetworkProvider(interceptor: Interceptor(adapters: [auth], retriers: [auth, RetryPolicy()]))
    try await auth.signIn(with: ServiceToken.fetch(with: provider))   // at startup: the first token
    return provider
}

@Suite struct AuthServiceDocSnippetTests {
    struct Order: Decodable, Sendable { let id: Int }

    @Test func aRevokedServiceTokenIsFetchedAgainOnceForEveryRefusedCall() async throws {
        // RFC 6749 §4.4: the client credentials grant; RFC 6750 §3.1: a 401 for a token that is no longer valid.
        let server = MockServer()
        server.stub(.post, "/oauth/token", .json(raw: #"{"access_token":"t-1","expires_in":3600}"#), .json(raw: #"{"access_token":"t-2","expires_in":3600}"#))
        server.stub(.get, "/v1/orders/1") { (request: RecordedRequest) -> MockResponse in
            request.header("Authorization") == "Bearer t-2" ? .json(raw: #"{"id":1}"#) : .status(401)
        }
        let provider = try await makeServiceProvider(on: server)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 { group.addTask { try await provider.request(OrdersEndpoint(), as: Order.self).id } }
            for try await id in group { #expect(id == 1) }
        }
        #expect(server.requests(.post, "/oauth/token").count == 2)   // the first token, and one refresh for all 20
    }

    @Test func aRefusedTokenRequestKeepsTheServiceSignedInAndTheNextCallAsksAgain() async throws {
        // RFC 6749 §5.2: `invalid_client` is the client's secret refused, not a refresh token: not a session's end.
        let server = MockServer()
        server.stub(.post, "/oauth/token",
                    .json(raw: #"{"access_token":"t-1"}"#),
                    .json(raw: #"{"error":"invalid_client"}"#, statusCode: 401),
                    .json(raw: #"{"access_token":"t-3"}"#))
        server.stub(.get, "/v1/orders/1") { (request: RecordedRequest) -> MockResponse in
            request.header("Authorization") == "Bearer t-3" ? .json(raw: #"{"id":1}"#) : .status(401)
        }
        let provider = try await makeServiceProvider(on: server)
        await #expect(throws: NetworkError.self) { try await provider.request(OrdersEndpoint(), as: Order.self) }
        do {
            _ = try await provider.request(OrdersEndpoint(), as: Order.self)
        } catch {
            Issue.record("the next call should fetch a token again, got \(error)")
        }
    }
}

struct OrdersEndpoint: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/orders/1" }
}
