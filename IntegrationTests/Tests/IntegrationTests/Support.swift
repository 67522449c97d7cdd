import Foundation
import Networking
import TestServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A call to the test server.
struct Call: Endpoint {
    var baseURL: URL
    var path: String
    var method: HTTPMethod = .get
    var headers: [String: String] = [:]
    var queryItems: [URLQueryItem] = []
    var body: RequestBody = .none
    var requiresAuthentication = true
}

struct Tokens: Decodable, Sendable {
    let accessToken: String
    let refreshToken: String
    let expiresIn: TimeInterval?
    var credential: Credential { Credential(accessToken: accessToken, refreshToken: refreshToken) }
}

struct Item: Decodable, Sendable {
    let id: String
    let token: String
}

struct Echo: Decodable, Sendable {
    let method: String
    let path: String
    let query: [String: String]
    let headers: [String: String]
    let body: String
}

/// An app's wiring against the live server: a plain provider for sign-in and refresh (the pattern the
/// docs recommend), and an authenticated one for everything else.
struct LiveClient {
    let server: TestServer
    let plain: NetworkProvider
    let provider: NetworkProvider
    let auth: AuthInterceptor

    init(
        _ server: TestServer,
        header: AuthorizationHeader = .bearer,
        configuration: URLSessionConfiguration = .ephemeral,
        store: any CredentialStore = InMemoryCredentialStore(),
        retriers: [any RequestRetrier] = [],
        refreshWindow: RefreshWindow = RefreshWindow(),
        cache: (any ResponseCache)? = nil,
        now: @escaping @Sendable () -> Date = { Date() },
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = NetworkProvider.taskSleep
    ) {
        self.server = server
        let plain = NetworkProvider(configuration: configuration)
        let base = server.baseURL
        let auth = AuthInterceptor(baseURL: base, store: store, header: header, refreshWindow: refreshWindow) { credential, _ in
            try await plain.request(
                Call(
                    baseURL: base, path: "/auth/refresh", method: .post,
                    body: .json(["refreshToken": credential.refreshToken]), requiresAuthentication: false),
                as: Tokens.self
            ).credential
        }
        self.plain = plain
        self.auth = auth
        self.provider = NetworkProvider(
            configuration: configuration,
            interceptor: Interceptor(adapters: [auth], retriers: [auth] + retriers),
            cache: cache,
            now: now,
            sleep: sleep
        )
    }

    func call(_ path: String, _ method: HTTPMethod = .get, headers: [String: String] = [:], body: RequestBody = .none) -> Call {
        Call(baseURL: server.baseURL, path: path, method: method, headers: headers, body: body)
    }

    /// Signs in through `path` and stores the credential, for `account` when given (the response cache's
    /// partition; `/cache/sign-in` issues tokens the server maps to it).
    @discardableResult
    func signIn(account: String? = nil, path: String = "/auth/sign-in") async throws -> Tokens {
        let body = account.map { RequestBody.json(["account": $0]) } ?? RequestBody.none
        let tokens = try await plain.request(
            Call(baseURL: server.baseURL, path: path, method: .post, body: body, requiresAuthentication: false), as: Tokens.self)
        var credential = tokens.credential
        credential.account = account
        try await auth.signIn(with: credential)
        return tokens
    }

    /// Tells the server to expire or revoke tokens.
    func admin(_ action: String) async throws {
        try await plain.request(Call(baseURL: server.baseURL, path: "/admin/\(action)", method: .post, requiresAuthentication: false))
    }
}

/// Starts a server for one test and stops it afterwards.
func withServer<T>(_ body: (TestServer) async throws -> T) async throws -> T {
    let server = try await TestServer.start()
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}
