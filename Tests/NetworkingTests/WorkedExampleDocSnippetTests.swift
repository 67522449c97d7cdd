// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in Docs/WorkedExample.md: keep each identical to the page.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

struct GeneralResponse<T: Decodable>: Decodable {
    let status: Int
    let divisionCode: String
    let message: String
    let data: T?
}

/// What the server said when it said no: the envelope of an unacceptable status.
struct EnvelopeError: Error, Decodable, Equatable {
    struct Tokens: Decodable, Equatable { let accessToken: String; let refreshToken: String }
    struct Payload: Decodable, Equatable { let jwtToken: Tokens? }

    let status: Int
    let divisionCode: String
    let message: String
    let data: Payload?

    /// The provider's error mapper: an unacceptable status whose body is an envelope becomes an `EnvelopeError`;
    /// any other body keeps `NetworkError.invalidStatusCode`.
    static let mapper: ErrorResponseMapper = { response in
        try? JSONDecoder().decode(EnvelopeError.self, from: response.data)
    }
}

extension NetworkProviding {
    /// Sends `endpoint` and returns the envelope's `data`.
    func data<T: Decodable>(_ endpoint: some Endpoint, as type: T.Type) async throws -> T {
        let envelope = try await request(endpoint, as: GeneralResponse<T>.self)
        guard let data = envelope.data else {
            throw EnvelopeError(status: envelope.status, divisionCode: envelope.divisionCode, message: envelope.message, data: nil)
        }
        return data
    }
}

enum MemberAPI: Endpoint {
    case signIn(email: String, password: String)
    case refresh(refreshToken: String)
    case me

    var baseURL: URL { URL(string: "https://api.example.kr/v1")! }
    var path: String {
        switch self {
        case .signIn: return "/auth/sign-in"
        case .refresh: return "/auth/refresh"
        case .me: return "/members/me"
        }
    }
    var method: HTTPMethod {
        if case .me = self { return .get }
        return .post
    }
    var body: RequestBody {
        switch self {
        case let .signIn(email, password): return .json(["email": email, "password": password])
        case let .refresh(token): return .json(["refreshToken": token])
        case .me: return .none
        }
    }
    var requiresAuthentication: Bool {
        if case .me = self { return true }
        return false
    }
}

struct MemberTokens: Decodable {
    let accessToken: String
    let refreshToken: String
    var credential: Credential { Credential(accessToken: accessToken, refreshToken: refreshToken) }
}

struct Member: Decodable, Equatable {
    let id: Int
    let nickname: String
}

func makeMemberStore() -> any CredentialStore {
    #if canImport(Security)
    return KeychainCredentialStore(service: "kr.example.app.auth", account: "member")
    #else
    return InMemoryCredentialStore()   // Linux has no Keychain
    #endif
}

func makeNetwork(store: any CredentialStore) -> (provider: NetworkProvider, auth: AuthInterceptor) {
    let auth = AuthInterceptor(baseURL: URL(string: "https://api.example.kr/v1")!, store: store) { credential, network in
        try await network.data(MemberAPI.refresh(refreshToken: credential.refreshToken), as: MemberTokens.self).credential
    }
    return (NetworkProvider(interceptor: auth, errorMapper: EnvelopeError.mapper), auth)
}

enum SignInOutcome: Equatable {
    case signedIn
    case signUpIncomplete   // E009: signed in, but the profile steps are not done
}

struct MemberRepository {
    let network: any NetworkProviding
    let auth: AuthInterceptor

    func signIn(email: String, password: String) async throws -> SignInOutcome {
        do {
            let tokens = try await network.data(MemberAPI.signIn(email: email, password: password), as: MemberTokens.self)
            try await auth.signIn(with: tokens.credential)
            return .signedIn
        } catch let error as EnvelopeError where error.divisionCode == "E009" {
            guard let tokens = error.data?.jwtToken else { throw error }
            try await auth.signIn(with: Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken))
            return .signUpIncomplete
        }
    }

    func me() async throws -> Member {
        try await network.data(MemberAPI.me, as: Member.self)
    }
}

/// The page's app wiring.
func makeMembers() -> MemberRepository {
    let (provider, auth) = makeNetwork(store: makeMemberStore())
    let members = MemberRepository(network: provider, auth: auth)
    return members
}

@Suite("Docs/WorkedExample.md snippets")
struct WorkedExampleDocSnippetTests {
    @Test func anIncompleteSignUpStillSignsInWithTheTokensItCarries() async throws {
        let server = MockServer()
        server.stub(.post, "/v1/auth/sign-in", .json(raw: #"""
            {"status":400,"divisionCode":"E009","message":"Not Completed SignUp Exception",
             "data":{"jwtToken":{"accessToken":"a-1","refreshToken":"r-1"}}}
            """#, statusCode: 400))
        server.stub(.get, "/v1/members/me", .json(raw: #"{"status":200,"divisionCode":"S000","message":"OK","data":{"id":7,"nickname":"홍길동"}}"#))
        let store = InMemoryCredentialStore()
        let auth = AuthInterceptor(baseURL: URL(string: "https://api.example.kr/v1")!, store: store) { credential, _ in credential }
        let members = MemberRepository(network: server.makeProvider(interceptor: auth, errorMapper: EnvelopeError.mapper), auth: auth)

        #expect(try await members.signIn(email: "kim@example.kr", password: "pw") == .signUpIncomplete)
        #expect(try await store.load()?.accessToken == "a-1")
        #expect(try await members.me() == Member(id: 7, nickname: "홍길동"))
        #expect(server.requests(.get, "/v1/members/me").first?.header("Authorization") == "Bearer a-1")
    }

    @Test func theAppWiringPutsTheInterceptorOnTheInjectedProvider() throws {
        let members = makeMembers()
        let provider = try #require(members.network as? NetworkProvider)
        #expect(provider.interceptor as? AuthInterceptor === members.auth)
    }

    @Test func anEnvelopeWithoutDataIsAnError() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/members/me", .json(raw: #"{"status":200,"divisionCode":"S404","message":"no member","data":null}"#))
        let auth = AuthInterceptor(baseURL: URL(string: "https://api.example.kr/v1")!, store: InMemoryCredentialStore(Credential(accessToken: "a", refreshToken: "r"))) { credential, _ in credential }
        let members = MemberRepository(network: server.makeProvider(interceptor: auth, errorMapper: EnvelopeError.mapper), auth: auth)
        await #expect(throws: EnvelopeError(status: 200, divisionCode: "S404", message: "no member", data: nil)) { try await members.me() }
    }

    @Test func anExpiredTokenIsRefreshedThroughTheEnvelope() async throws {
        let server = MockServer()
        server.stub(.post, "/v1/auth/refresh", .json(raw: #"{"status":200,"divisionCode":"S000","message":"OK","data":{"accessToken":"a-2","refreshToken":"r-2"}}"#))
        server.stub(.get, "/v1/members/me") { request in
            request.header("Authorization") == "Bearer a-2"
                ? .json(raw: #"{"status":200,"divisionCode":"S000","message":"OK","data":{"id":7,"nickname":"Kim"}}"#)
                : .json(raw: #"{"status":401,"divisionCode":"E401","message":"expired","data":null}"#, statusCode: 401)
        }
        let store = InMemoryCredentialStore(Credential(accessToken: "a-1", refreshToken: "r-1"))
        let auth = AuthInterceptor(baseURL: URL(string: "https://api.example.kr/v1")!, store: store) { credential, network in
            try await network.data(MemberAPI.refresh(refreshToken: credential.refreshToken), as: MemberTokens.self).credential
        }
        let members = MemberRepository(network: server.makeProvider(interceptor: auth, errorMapper: EnvelopeError.mapper), auth: auth)
        #expect(try await members.me() == Member(id: 7, nickname: "Kim"))
        #expect(try await store.load()?.refreshToken == "r-2")
    }
}
