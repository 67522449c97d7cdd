import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport

/// A mock auth API: `POST /v1/auth/refresh` rotates tokens, `GET /v1/items/{id}` needs a valid token.
/// Every access token but the newest is expired, and refresh tokens are single-use.
final class TokenServer: @unchecked Sendable {
    // @unchecked: all mutable state is guarded by `lock`.
    enum RefreshAnswer: Sendable { case rotate, reject, unavailable }

    struct RefreshBody: Codable, Sendable { let refreshToken: String }
    struct TokenResponse: Codable, Sendable { let accessToken: String; let refreshToken: String }

    static let baseURL = URL(string: "https://api.example.com/v1/")!

    let mock = MockServer()
    private let lock = NSLock()
    private var validAccessToken: String?
    private var validRefreshToken = "refresh-0"
    private var generation = 0
    private var refreshes = 0
    private var answer = RefreshAnswer.rotate
    private var gate: Signal?
    /// Fired when a refresh request arrives.
    let refreshArrived = Signal()

    /// Header name and prefix the protected endpoints read the token from.
    let header: AuthorizationHeader
    /// The status that means "expired".
    let expiredStatus: Int

    init(header: AuthorizationHeader = .bearer, expiredStatus: Int = 401, accessTokenIsValid: Bool = false) {
        self.header = header
        self.expiredStatus = expiredStatus
        if accessTokenIsValid { validAccessToken = "access-0" }
        mock.stub(.post, "/v1/auth/refresh") { [unowned self] request in try await self.handleRefresh(request) }
        mock.stub { [unowned self] request in self.handleProtected(request) }
    }

    /// The credential the app starts with: `access-0` (expired unless said otherwise) and `refresh-0`.
    static let initialCredential = Credential(accessToken: "access-0", refreshToken: "refresh-0")

    var refreshCount: Int { locked { refreshes } }
    var currentAccessToken: String? { locked { validAccessToken } }

    func setRefreshAnswer(_ answer: RefreshAnswer) { locked { self.answer = answer } }
    /// Holds refresh answers until `gate` fires.
    func holdRefreshes(until gate: Signal) { locked { self.gate = gate } }
    /// Expires every access token (as if its lifetime ran out on the server).
    func expireAccessTokens() { locked { validAccessToken = nil } }

    /// A provider wired to this server with an ``AuthInterceptor`` whose refresh call goes through that
    /// same provider (the hardest case for loop-proofing).
    func makeClient(
        credential: Credential? = TokenServer.initialCredential,
        store: (any CredentialStore)? = nil,
        refreshWindow: RefreshWindow = RefreshWindow(),
        clock: TestClock = TestClock(),
        refreshLeeway: TimeInterval = 60,
        maximumAttempts: Int = NetworkProvider.defaultMaximumAttempts
    ) -> (provider: NetworkProvider, auth: AuthInterceptor, store: any CredentialStore) {
        let store = store ?? InMemoryCredentialStore(credential)
        let box = WeakProvider()
        let auth = AuthInterceptor(
            baseURL: Self.baseURL,
            store: store,
            header: header,
            expiredStatusCodes: [expiredStatus],
            refreshLeeway: refreshLeeway,
            refreshWindow: refreshWindow,
            now: { clock.now }
        ) { credential in
            guard let provider = box.provider else { throw NetworkError.cancelled }
            let tokens = try await provider.request(RefreshEndpoint(refreshToken: credential.refreshToken), as: TokenResponse.self)
            return Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken)
        }
        let provider = mock.makeProvider(interceptor: auth, maximumAttempts: maximumAttempts)
        box.provider = provider
        return (provider, auth, store)
    }

    private func handleRefresh(_ request: RecordedRequest) async throws -> MockResponse {
        refreshArrived.fire()
        if let gate = locked({ gate }) { await gate.wait() }
        let body = try request.decodeBody(as: RefreshBody.self)
        return locked {
            refreshes += 1
            switch answer {
            case .unavailable:
                return .status(503)
            case .reject:
                return .json(raw: #"{"error":"invalid_grant"}"#, statusCode: 401)
            case .rotate:
                guard body.refreshToken == validRefreshToken else {
                    return .json(raw: #"{"error":"invalid_grant"}"#, statusCode: 401)
                }
                generation += 1
                validAccessToken = "access-\(generation)"
                validRefreshToken = "refresh-\(generation)"
                return .json(TokenResponse(accessToken: "access-\(generation)", refreshToken: "refresh-\(generation)"))
            }
        }
    }

    private func handleProtected(_ request: RecordedRequest) -> MockResponse {
        guard request.url.host == "api.example.com", request.path.hasPrefix("/v1/items") else { return .status(200) }
        let sent = request.header(header.name).flatMap { $0.hasPrefix(header.prefix) ? String($0.dropFirst(header.prefix.count)) : nil }
        guard let sent, sent == locked({ validAccessToken }) else { return .status(expiredStatus) }
        return .json(Item(id: Int(request.path.split(separator: "/").last ?? "") ?? -1, token: sent))
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock(); defer { lock.unlock() }
        return body()
    }
}

/// What a protected endpoint returns: the item and the token it was fetched with.
struct Item: Codable, Equatable, Sendable {
    let id: Int
    let token: String
}

/// `GET /v1/items/{id}`, which needs authentication.
struct ItemEndpoint: Endpoint {
    let id: Int
    var baseURL: URL = TokenServer.baseURL
    var path: String { "/items/\(id)" }
}

/// The app's refresh endpoint. It keeps the default `requiresAuthentication` (true) on purpose: the
/// interceptor must recognise its own refresh without being told.
struct RefreshEndpoint: Endpoint {
    let refreshToken: String
    var baseURL: URL { TokenServer.baseURL }
    var path: String { "/auth/refresh" }
    var method: HTTPMethod { .post }
    var body: RequestBody { .json(TokenServer.RefreshBody(refreshToken: refreshToken)) }
}

/// Lets the refresh closure reach the provider it is installed in, without a retain cycle.
final class WeakProvider: @unchecked Sendable {
    // @unchecked: written once, before any request is sent.
    weak var provider: NetworkProvider?
}

/// A clock the test moves by hand.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current = Date(timeIntervalSince1970: 1_800_000_000)

    var now: Date {
        lock.lock(); defer { lock.unlock() }
        return current
    }

    func advance(by seconds: TimeInterval) {
        lock.lock(); defer { lock.unlock() }
        current += seconds
    }
}
