import Foundation
import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A mock token-authenticated API on a ``MockServer``, for testing and demonstrating
/// ``AuthInterceptor`` wiring without a server.
///
/// - `POST {baseURL}/auth/sign-in` (any body) answers fresh ``Tokens``, as a successful sign-in.
/// - `POST {baseURL}/auth/refresh` with `{"refreshToken": "..."}` answers `{"accessToken", "refreshToken"}`
///   and rotates both: only the newest access token is valid, and a refresh token works once.
///   The app's own token protocol (path, method, where the refresh token goes, the answer's shape, a
///   rejection's status and body) is described by a ``TokenExchange``: ``init(baseURL:header:expiredStatusCode:accessTokenIsValid:tokenLifetime:issuesJWTs:tokenExchange:)``.
/// - Every other request to the API's host needs the newest access token in ``header``; it answers a
///   ``Resource`` naming the path and the token it saw, or ``expiredStatusCode``.
/// - Requests to other hosts get an empty `200`.
///
/// ```swift
/// let api = MockAuthServer()                       // the app holds "access-0", which has expired
/// let (provider, auth) = api.makeAuthenticatedProvider()
/// let resource = try await provider.request(api.resource("/items/1"), as: MockAuthServer.Resource.self)
/// // resource.token == "access-1", api.refreshCount == 1
/// ```
public final class MockAuthServer: @unchecked Sendable {
    // @unchecked: all mutable state is guarded by `lock`.

    /// How the refresh endpoint answers.
    public enum RefreshAnswer: Sendable {
        /// Rotates the tokens (if the refresh token is the current one; else the ``TokenExchange/rejection``,
        /// 401 `invalid_grant` by default).
        case rotate
        /// Rejects every refresh token with the ``TokenExchange/rejection``, 401 `invalid_grant` by default.
        case reject
        /// Answers 503, as an auth server that is down.
        case unavailable
    }

    /// The refresh endpoint's request body.
    public struct RefreshRequest: Codable, Sendable {
        /// The refresh token being spent.
        public let refreshToken: String

        /// Creates the body that spends `refreshToken`.
        public init(refreshToken: String) {
            self.refreshToken = refreshToken
        }
    }

    /// The refresh endpoint's answer.
    public struct Tokens: Codable, Sendable {
        /// The new access token.
        public let accessToken: String
        /// The new refresh token (the old one no longer works).
        public let refreshToken: String
        /// Seconds until the access token expires, when the server says.
        public let expiresIn: TimeInterval?

        /// Creates an answer.
        public init(accessToken: String, refreshToken: String, expiresIn: TimeInterval? = nil) {
            self.accessToken = accessToken
            self.refreshToken = refreshToken
            self.expiresIn = expiresIn
        }
    }

    /// What a protected request gets: its path and the token it was sent with.
    public struct Resource: Codable, Equatable, Sendable {
        /// The request's path.
        public let path: String
        /// The access token the server saw.
        public let token: String

        /// Creates a resource.
        public init(path: String, token: String) {
            self.path = path
            self.token = token
        }
    }

    /// A call to the API's refresh endpoint. Its `requiresAuthentication` stays `true` on purpose: an
    /// ``AuthInterceptor`` must recognise its own refresh without being told.
    public struct RefreshEndpoint: Endpoint {
        /// The API's base URL.
        public let baseURL: URL
        /// The refresh token to spend.
        public let refreshToken: String

        /// Creates the call that spends `refreshToken` at `baseURL`.
        public init(baseURL: URL, refreshToken: String) {
            self.baseURL = baseURL
            self.refreshToken = refreshToken
        }

        /// The path: `/auth/refresh`.
        public var path: String { "/auth/refresh" }
        /// The method: `POST`.
        public var method: HTTPMethod { .post }
        /// A JSON `RefreshRequest` carrying ``refreshToken``.
        public var body: RequestBody { .json(RefreshRequest(refreshToken: refreshToken)) }
    }

    /// A call to the API's sign-in endpoint, which needs no authentication.
    public struct SignInEndpoint: Endpoint {
        /// The API's base URL.
        public let baseURL: URL

        /// Creates the sign-in call at `baseURL`.
        public init(baseURL: URL) {
            self.baseURL = baseURL
        }

        /// The path: `/auth/sign-in`.
        public var path: String { "/auth/sign-in" }
        /// The method: `POST`.
        public var method: HTTPMethod { .post }
        /// `false`: signing in needs no token.
        public var requiresAuthentication: Bool { false }
    }

    /// A protected call: `GET {baseURL}{path}`.
    public struct ResourceEndpoint: Endpoint {
        /// The API's base URL.
        public let baseURL: URL
        /// The path under the base URL.
        public let path: String

        /// Creates a protected call to `path` under `baseURL`.
        public init(baseURL: URL, path: String) {
            self.baseURL = baseURL
            self.path = path
        }
    }

    /// The credential an app starts with: `access-0` (expired unless the server was told otherwise)
    /// and `refresh-0`.
    public static let initialCredential = Credential(accessToken: "access-0", refreshToken: "refresh-0")

    /// The stub server that answers the requests.
    public let mock = MockServer()
    /// The API's base URL, `https://api.example.com/v1/` by default.
    public let baseURL: URL
    /// Where protected requests must carry the token.
    public let header: AuthorizationHeader
    /// The status a protected request gets for a missing, old or unknown token.
    public let expiredStatusCode: Int
    /// The lifetime announced for issued access tokens (`expiresIn`), if any. The server itself does
    /// not expire them by time: ``expireAccessTokens()`` does.
    public let tokenLifetime: TimeInterval?
    /// Whether issued access tokens are JWTs whose `exp` claim says when they expire (then `expiresIn`
    /// is not announced, so the app learns the expiry from the token alone).
    public let issuesJWTs: Bool

    private let lock = NSLock()
    private var validAccessToken: String?
    private var validRefreshToken = "refresh-0"
    private var generation = 0
    private var refreshes = 0
    private var answer = RefreshAnswer.rotate
    private var refreshHook: (@Sendable () async -> Void)?
    private var tokensResponse: @Sendable (Tokens) -> MockResponse
    /// The token endpoint's protocol: ``TokenExchange/default`` unless the server was made with another.
    public let tokenExchange: TokenExchange
    private var expiredResponses = 0
    private var resourceResponse: @Sendable (Resource) -> MockResponse = { .json($0) }
    private var expiredResponse: MockResponse?

    /// Creates the API.
    ///
    /// - Parameters:
    ///   - accessTokenIsValid: whether `access-0` still works (by default it has expired).
    ///   - tokenLifetime: the lifetime of issued access tokens, announced as `expiresIn` (or, with
    ///     `issuesJWTs`, written in their `exp` claim: one hour when `nil`).
    ///   - issuesJWTs: issue JWT access tokens that carry their expiry, and announce no `expiresIn`.
    public init(
        baseURL: URL = URL(string: "https://api.example.com/v1/")!,
        header: AuthorizationHeader = .bearer,
        expiredStatusCode: Int = 401,
        accessTokenIsValid: Bool = false,
        tokenLifetime: TimeInterval? = nil,
        issuesJWTs: Bool = false
    ) {
        self.baseURL = baseURL
        self.header = header
        self.expiredStatusCode = expiredStatusCode
        self.tokenLifetime = tokenLifetime
        self.issuesJWTs = issuesJWTs
        self.tokenExchange = .default
        self.tokensResponse = { .json($0) }
        if accessTokenIsValid { validAccessToken = "access-0" }
        installStubs()
    }

    /// Creates the API, whose token endpoint speaks the app's protocol, `tokenExchange`: its path and
    /// method, where the refresh token goes, how new tokens are written (by the sign-in endpoint too) and
    /// what a rejected refresh gets. The other parameters are those of
    /// ``init(baseURL:header:expiredStatusCode:accessTokenIsValid:tokenLifetime:issuesJWTs:)``.
    ///
    /// ``makeInterceptor(store:refreshLeeway:refreshWindow:now:)`` speaks the default protocol only: test the
    /// app's own ``AuthInterceptor`` (its refresh closure) against this one.
    public init(
        baseURL: URL = URL(string: "https://api.example.com/v1/")!,
        header: AuthorizationHeader = .bearer,
        expiredStatusCode: Int = 401,
        accessTokenIsValid: Bool = false,
        tokenLifetime: TimeInterval? = nil,
        issuesJWTs: Bool = false,
        tokenExchange: TokenExchange
    ) {
        self.baseURL = baseURL
        self.header = header
        self.expiredStatusCode = expiredStatusCode
        self.tokenLifetime = tokenLifetime
        self.issuesJWTs = issuesJWTs
        self.tokenExchange = tokenExchange
        let answer = tokenExchange.answer
        self.tokensResponse = { answer.response(for: $0) }
        if accessTokenIsValid { validAccessToken = "access-0" }
        installStubs()
    }

    private func installStubs() {
        mock.stub(.post, baseURL.appendingPathComponent("auth/sign-in").path) { [weak self] _ in
            guard let self else { throw URLError(.cannotConnectToHost) }
            let (tokens, respond) = self.locked { (self.issueTokens(), self.tokensResponse) }
            return respond(tokens)
        }
        mock.stub(tokenExchange.method, tokenExchange.fullPath(under: baseURL)) { [weak self] request in
            guard let self else { throw URLError(.cannotConnectToHost) }
            return try await self.answerRefresh(request)
        }
        mock.stub { [weak self] request in
            guard let self else { throw URLError(.cannotConnectToHost) }
            return self.answerProtected(request)
        }
    }

    /// How many refresh requests arrived.
    public var refreshCount: Int { locked { refreshes } }
    /// How many protected requests were answered with ``expiredStatusCode``.
    public var expiredResponseCount: Int { locked { expiredResponses } }
    /// The one access token that works now, if any.
    public var currentAccessToken: String? { locked { validAccessToken } }

    /// Makes the refresh endpoint answer `answer` from now on.
    public func setRefreshAnswer(_ answer: RefreshAnswer) { locked { self.answer = answer } }
    /// Makes the sign-in and refresh endpoints answer new tokens with `response` from now on, instead of
    /// `.json(tokens)` (`{"accessToken":…,"refreshToken":…}`): for an app whose auth server wraps them,
    /// e.g. in an envelope. Rejections and failures stay as ``setRefreshAnswer(_:)`` says. The
    /// interceptor of ``makeInterceptor(store:refreshLeeway:refreshWindow:now:)`` reads the default shape
    /// only: test an app's own `AuthInterceptor` (its refresh closure) against the new one.
    ///
    /// ```swift
    /// api.setTokensResponse { tokens in .json(Envelope(status: 200, data: tokens)) }
    /// ```
    public func setTokensResponse(_ response: @escaping @Sendable (Tokens) -> MockResponse) { locked { tokensResponse = response } }
    /// Makes protected requests answer in the app's envelope from now on: a valid token gets
    /// `resource(Resource)` instead of `.json(resource)`, and a missing, old or unknown token gets `expired`
    /// instead of ``expiredStatusCode`` (say, a `200` whose envelope says the token expired). Still counted in
    /// ``expiredResponseCount``.
    ///
    /// ```swift
    /// api.setProtectedResponses(
    ///     resource: { .json(APIEnvelope(divisionCode: "0000", data: $0)) },
    ///     expired: .json(raw: #"{"divisionCode":"E401","resultMsg":"token expired"}"#, statusCode: 200))
    /// ```
    public func setProtectedResponses(resource: @escaping @Sendable (Resource) -> MockResponse, expired: MockResponse) {
        locked {
            resourceResponse = resource
            expiredResponse = expired
        }
    }
    /// Runs `hook` when a refresh request arrives, before it is answered (e.g. to hold it open).
    public func onRefresh(_ hook: @escaping @Sendable () async -> Void) { locked { refreshHook = hook } }
    /// Expires every access token, as if its lifetime ran out on the server.
    public func expireAccessTokens() { locked { validAccessToken = nil } }

    /// A call to the sign-in endpoint.
    public func signIn() -> SignInEndpoint {
        SignInEndpoint(baseURL: baseURL)
    }

    /// A protected call to `path` under the base URL.
    public func resource(_ path: String) -> ResourceEndpoint {
        ResourceEndpoint(baseURL: baseURL, path: path)
    }

    /// A provider wired to this API with an ``AuthInterceptor`` whose refresh call goes through that
    /// same provider (the `network` the refresh closure receives), the hardest case for loop-proofing.
    /// `retriers` are composed after the interceptor.
    public func makeAuthenticatedProvider(
        credential: Credential? = MockAuthServer.initialCredential,
        store: (any CredentialStore)? = nil,
        refreshLeeway: TimeInterval = 60,
        refreshWindow: RefreshWindow = RefreshWindow(),
        now: @escaping @Sendable () -> Date = { Date() },
        retriers: [any RequestRetrier] = [],
        maximumAttempts: Int = NetworkProvider.defaultMaximumAttempts,
        monitors: [any EventMonitor] = [],
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = NetworkProvider.taskSleep
    ) -> (provider: NetworkProvider, auth: AuthInterceptor) {
        let auth = makeInterceptor(
            store: store ?? InMemoryCredentialStore(credential), refreshLeeway: refreshLeeway,
            refreshWindow: refreshWindow, now: now)
        let interceptor = Interceptor(adapters: [auth], retriers: [auth] + retriers)
        let provider = mock.makeProvider(interceptor: interceptor, maximumAttempts: maximumAttempts, monitors: monitors, sleep: sleep)
        return (provider, auth)
    }

    /// An ``AuthInterceptor`` for this API whose refresh calls ``RefreshEndpoint`` through the `network`
    /// it is given. Two of them sharing one `store` behave as an app and its extension would.
    public func makeInterceptor(
        store: any CredentialStore,
        refreshLeeway: TimeInterval = 60,
        refreshWindow: RefreshWindow = RefreshWindow(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) -> AuthInterceptor {
        let baseURL = self.baseURL
        return AuthInterceptor(
            baseURL: baseURL,
            store: store,
            header: header,
            expiredStatusCodes: [expiredStatusCode],
            refreshLeeway: refreshLeeway,
            refreshWindow: refreshWindow,
            now: now
        ) { credential, network in
            let tokens = try await network.request(RefreshEndpoint(baseURL: baseURL, refreshToken: credential.refreshToken), as: Tokens.self)
            return Credential(
                accessToken: tokens.accessToken, refreshToken: tokens.refreshToken,
                expiresAt: tokens.expiresIn.map { now().addingTimeInterval($0) })
        }
    }

    private func answerRefresh(_ request: RecordedRequest) async throws -> MockResponse {
        if let hook = locked({ refreshHook }) { await hook() }
        let presented = tokenExchange.refreshToken.token(in: request)
        let rejection = tokenExchange.rejection.response
        enum Outcome {
            case answer(MockResponse)
            case issued(Tokens, @Sendable (Tokens) -> MockResponse)
        }
        let outcome: Outcome = locked {
            refreshes += 1
            switch answer {
            case .unavailable:
                return .answer(.status(503))
            case .reject:
                return .answer(rejection)
            case .rotate:
                guard presented == validRefreshToken else { return .answer(rejection) }
                return .issued(issueTokens(), tokensResponse)
            }
        }
        switch outcome {
        case .answer(let response): return response
        case .issued(let tokens, let respond): return respond(tokens)   // outside the lock: the test's closure
        }
    }

    /// Issues the next pair and revokes the previous one; call with `lock` held.
    private func issueTokens() -> Tokens {
        generation += 1
        let accessToken =
            issuesJWTs
            ? Self.jwt(subject: "access-\(generation)", expiresAt: Date().addingTimeInterval(tokenLifetime ?? 3_600))
            : "access-\(generation)"
        validAccessToken = accessToken
        validRefreshToken = "refresh-\(generation)"
        return Tokens(accessToken: accessToken, refreshToken: "refresh-\(generation)", expiresIn: issuesJWTs ? nil : tokenLifetime)
    }

    /// An unsigned JWT (`alg: none`) naming `subject` and expiring at `expiresAt`, as an auth server
    /// would issue one: `header.payload.signature`, base64url without padding.
    ///
    /// ```swift
    /// let expired = Credential(accessToken: MockAuthServer.jwt(subject: "me", expiresAt: Date() - 60), refreshToken: "refresh-0")
    /// ```
    public static func jwt(subject: String, expiresAt: Date) -> String {
        func base64URL(_ json: String) -> String {
            Data(json.utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let payload = #"{"sub":"\#(subject)","exp":\#(Int(expiresAt.timeIntervalSince1970))}"#
        return base64URL(#"{"alg":"none","typ":"JWT"}"#) + "." + base64URL(payload) + ".unsigned"
    }

    private func answerProtected(_ request: RecordedRequest) -> MockResponse {
        guard request.url.host == baseURL.host, request.url.port == baseURL.port, request.url.scheme == baseURL.scheme else {
            return .status(200)
        }
        let token = request.header(header.name).flatMap { value in
            value.hasPrefix(header.prefix) ? String(value.dropFirst(header.prefix.count)) : nil
        }
        let (valid, respond, expired) = locked { (validAccessToken, resourceResponse, expiredResponse) }
        guard let token, token == valid else {
            locked { expiredResponses += 1 }
            return expired ?? .status(expiredStatusCode)
        }
        return respond(Resource(path: request.path, token: token))
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}
