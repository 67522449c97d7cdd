// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in Docs/Authentication.md: keep each identical to the page.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

enum AuthAPI: Endpoint {
    case signIn(email: String, password: String)
    case refresh(refreshToken: String)

    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String {
        switch self {
        case .signIn: return "/auth/sign-in"
        case .refresh: return "/auth/refresh"
        }
    }
    var method: HTTPMethod { .post }
    var body: RequestBody {
        switch self {
        case let .signIn(email, password): return .json(["email": email, "password": password])
        case let .refresh(token): return .json(["refreshToken": token])
        }
    }
    var requiresAuthentication: Bool { false }
}

struct TokenResponse: Decodable {
    /// The tokens, with `expiresIn` turned into a date once, when the answer was decoded.
    let credential: Credential

    private enum CodingKeys: String, CodingKey { case accessToken, refreshToken, expiresIn }

    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        let expiresIn = try fields.decodeIfPresent(TimeInterval.self, forKey: .expiresIn)
        credential = Credential(
            accessToken: try fields.decode(String.self, forKey: .accessToken),
            refreshToken: try fields.decode(String.self, forKey: .refreshToken),
            expiresAt: expiresIn.map { Date().addingTimeInterval($0) }
        )
    }
}

/// Section 2 and 3 of the page, as a function so the statements compile here.
func authenticationWiring() -> (NetworkProvider, AuthInterceptor, AuthInterceptor) {
    let auth = AuthInterceptor(baseURL: URL(string: "https://api.example.com/v1")!, store: InMemoryCredentialStore()) { credential, network in
        try await network.request(AuthAPI.refresh(refreshToken: credential.refreshToken), as: TokenResponse.self).credential
    }
    let provider = NetworkProvider(interceptor: auth, errorMapper: ServerError.mapper)

    let custom = AuthInterceptor(
        baseURL: URL(string: "https://api.example.com/v1")!,
        additionalScope: [URL(string: "https://upload.example.com")!],
        header: AuthorizationHeader(name: "accessToken"),   // raw token, custom header; default is .bearer
        expiredStatusCodes: [419],                          // default [401]
        refreshLeeway: 120                                  // refresh 2 minutes before a known expiry
    ) { credential, network in
        try await network.request(AuthAPI.refresh(refreshToken: credential.refreshToken), as: TokenResponse.self).credential
    }
    _ = strictInterceptor()
    return (provider, auth, custom)
}

/// `GET /v1/me` on the page's API.
struct MeEndpoint: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/me" }
}

/// Section 4 of the page.
func strictInterceptor() -> AuthInterceptor {
    let strict = AuthInterceptor(
        baseURL: URL(string: "https://api.example.com/v1")!,
        refreshWindow: RefreshWindow(interval: .infinity, maximumCount: 1),   // one refresh per launch
        readsTokenExpiry: false,                                              // ignore a JWT's exp claim
        rejection: .statusRule(or: { error in (error as? ServerError)?.divisionCode == "E401" }),
        refresh: { credential, network in
            try await network.request(AuthAPI.refresh(refreshToken: credential.refreshToken), as: TokenResponse.self).credential
        }
    )
    return strict
}

@MainActor
final class SessionObserver {
    var isSignInRequired = false

    func observe(_ auth: AuthInterceptor) -> Task<Void, Never> {
        let events = auth.events()
        return Task { @MainActor [weak self] in
            for await event in events {
                guard let self else { return }   // the observer is gone: stop listening
                if case .sessionExpired = event { self.isSignInRequired = true }
            }
        }
    }
}

struct ServerError: Error, Decodable {
    struct Payload: Decodable {
        struct JWT: Decodable { let accessToken: String; let refreshToken: String }
        let jwtToken: JWT?
    }
    let status: Int
    let divisionCode: String
    let message: String
    let data: Payload?

    static let mapper: ErrorResponseMapper = { response in
        try? JSONDecoder().decode(ServerError.self, from: response.data)   // nil: keep invalidStatusCode
    }

    /// The tokens of a sign-up that is not completed yet (E009), if this is one.
    var incompleteSignUpCredential: Credential? {
        guard divisionCode == "E009", let jwt = data?.jwtToken else { return nil }
        return Credential(accessToken: jwt.accessToken, refreshToken: jwt.refreshToken)
    }
}

enum SignInResult: Equatable {
    case signedIn
    case signUpIncomplete
}

struct AccountRepository {
    let network: any NetworkProviding
    let auth: AuthInterceptor

    func signIn(email: String, password: String) async throws -> SignInResult {
        do {
            let tokens = try await network.request(AuthAPI.signIn(email: email, password: password), as: TokenResponse.self)
            try await auth.signIn(with: tokens.credential)
            return .signedIn
        } catch let error as ServerError {
            guard let credential = error.incompleteSignUpCredential else { throw error }
            try await auth.signIn(with: credential)   // the app may call the sign-up completion endpoints
            return .signUpIncomplete
        }
    }
}

@Suite("Authentication doc snippets", SuiteTimeLimit.oneMinute)
struct AuthDocSnippetTests {
    @Test func aDecodedTokenResponseGivesTheSameCredentialOnEveryRead() throws {
        let response = try JSONDecoder().decode(TokenResponse.self, from: Data(#"{"accessToken":"a","refreshToken":"r","expiresIn":60}"#.utf8))
        let first = response.credential
        Thread.sleep(forTimeInterval: 0.01)   // a later read must not move the expiry
        #expect(response.credential == first)
        #expect(try #require(first.expiresAt).timeIntervalSinceNow > 50)
    }

    static let envelope = """
        {"status":400,"divisionCode":"E009","message":"Not Completed SignUp Exception",\
        "data":{"jwtToken":{"accessToken":"a","refreshToken":"r"}}}
        """

    func makeAccounts(signInAnswer: MockResponse) -> (AccountRepository, AuthInterceptor, InMemoryCredentialStore, MockServer) {
        let server = MockServer()
        server.stub(.post, "/v1/auth/sign-in", signInAnswer)
        let store = InMemoryCredentialStore()
        let auth = AuthInterceptor(baseURL: URL(string: "https://api.example.com/v1")!, store: store) { _, _ in
            throw NetworkError.sessionExpired
        }
        let repository = AccountRepository(network: server.makeProvider(interceptor: auth, errorMapper: ServerError.mapper), auth: auth)
        return (repository, auth, store, server)
    }

    @Test func incompleteSignUpBecomesAStateAndStillSavesTheTokens() async throws {
        // GIVEN a backend answering the E009 envelope
        let (repository, _, store, server) = makeAccounts(signInAnswer: .json(raw: Self.envelope, statusCode: 400))
        // WHEN the user signs in
        let result = try await repository.signIn(email: "kim@example.com", password: "pw")
        // THEN the repository reports the state and the tokens are stored
        #expect(result == .signUpIncomplete)
        #expect(try await store.load() == Credential(accessToken: "a", refreshToken: "r"))
        // and the sign-in itself carried no token
        #expect(server.requests.first?.header("Authorization") == nil)
    }

    @Test func completeSignInStoresTheCredential() async throws {
        let (repository, _, store, _) = makeAccounts(signInAnswer: .json(raw: #"{"accessToken":"x","refreshToken":"y","expiresIn":3600}"#))
        #expect(try await repository.signIn(email: "kim@example.com", password: "pw") == .signedIn)
        let stored = try #require(try await store.load())
        #expect(stored.accessToken == "x" && stored.refreshToken == "y" && stored.expiresAt != nil)
    }

    @Test func otherServerErrorsAreThrown() async throws {
        let (repository, _, store, _) = makeAccounts(signInAnswer: .json(raw: #"{"status":401,"divisionCode":"E001","message":"wrong password"}"#, statusCode: 401))
        await #expect {
            try await repository.signIn(email: "kim@example.com", password: "bad")
        } throws: { error in
            (error as? ServerError)?.divisionCode == "E001"
        }
        #expect(try await store.load() == nil)
    }

    @MainActor
    @Test func sessionObserverHearsTheExpiry() async throws {
        // GIVEN an observer of an interceptor whose refresh token is rejected
        let api = MockAuthServer()
        api.setRefreshAnswer(.reject)
        let (provider, auth) = api.makeAuthenticatedProvider()
        let observer = SessionObserver()
        let observation = observer.observe(auth)
        // WHEN a request needs a refresh
        await #expect(throws: NetworkError.self) { try await provider.response(api.resource("/me")) }
        // THEN the observer is told (its loop handles the buffered event once it runs)
        while !observer.isSignInRequired { await Task.yield() }
        observation.cancel()
        #expect(observer.isSignInRequired)
    }

    @MainActor
    @Test func sessionObserverDoesNotKeepItselfAlive() async throws {
        // GIVEN an observer listening to an interceptor that outlives it
        let api = MockAuthServer()
        api.setRefreshAnswer(.reject)
        let (provider, auth) = api.makeAuthenticatedProvider()
        var observer: SessionObserver? = SessionObserver()
        weak var watched: SessionObserver?
        watched = observer
        let observation = observer?.observe(auth)
        // WHEN the app lets go of the observer
        observer = nil
        // THEN it is released although its task still listens
        #expect(watched == nil)
        // AND the task ends at the next event (a strong capture would keep it listening: bounded wait)
        await #expect(throws: NetworkError.self) { try await provider.response(api.resource("/me")) }
        let ended = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await observation?.value; return true }
            group.addTask { try? await Task.sleep(nanoseconds: 5_000_000_000); return false }
            let first = await group.next() ?? false
            observation?.cancel()
            group.cancelAll()
            return first
        }
        #expect(ended)
    }

    @Test func theStrictInterceptorSignsOutOnAPlain401InvalidGrant() async throws {
        // RFC 6749 §5.2: a refused refresh token is `invalid_grant`; statusRule(or:) adds to the status rule.
        let server = MockServer()
        server.stub(.post, "/v1/auth/refresh", .json(raw: #"{"error":"invalid_grant"}"#, statusCode: 401))
        server.stub(.get, "/v1/me", .status(401))
        let strict = strictInterceptor()
        try await strict.signIn(with: Credential(accessToken: "a-1", refreshToken: "r-1"))
        let provider = server.makeProvider(interceptor: strict, errorMapper: ServerError.mapper)
        await #expect(throws: NetworkError.sessionExpired) { try await provider.response(MeEndpoint()) }
        #expect(try await strict.currentCredential() == nil)
    }

    @Test func wiringBuildsProviders() async throws {
        let (provider, auth, custom) = authenticationWiring()
        #expect(provider.interceptor is AuthInterceptor)
        #expect(auth.scope == [Origin(URL(string: "https://api.example.com")!)])
        #expect(custom.scope.count == 2 && custom.header.name == "accessToken" && custom.expiredStatusCodes == [419])
        let strict = strictInterceptor()
        #expect(strict.refreshWindow.interval == .infinity && !strict.readsTokenExpiry)
    }
}
