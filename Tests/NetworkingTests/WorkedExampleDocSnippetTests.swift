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

/// The envelope around every answer: `{"status", "divisionCode", "message", "data"}`. Codes starting with
/// "S" are successes; "E401" means the access token expired, whatever the HTTP status.
struct GeneralResponse: ResponseEnvelope {
    let status: Int
    let divisionCode: String
    let message: String
    /// The tokens an E009 ("sign-up not completed") carries in its `data`.
    let incompleteSignUpTokens: EnvelopeError.Tokens?

    private enum CodingKeys: String, CodingKey { case status, divisionCode, message, data }
    private struct SignUpData: Decodable { let jwtToken: EnvelopeError.Tokens }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = try container.decode(Int.self, forKey: .status)
        divisionCode = try container.decode(String.self, forKey: .divisionCode)
        message = try container.decode(String.self, forKey: .message)
        // Only an E009 carries tokens (if its data is there); any other answer's data is its payload, decoded by the call.
        incompleteSignUpTokens = divisionCode == "E009" ? try container.decodeIfPresent(SignUpData.self, forKey: .data)?.jwtToken : nil
    }

    func failure(statusCode: Int) -> EnvelopeFailure? {
        guard !divisionCode.hasPrefix("S") else { return nil }
        let error = EnvelopeError(status: status, divisionCode: divisionCode, message: message, tokens: incompleteSignUpTokens)
        return EnvelopeFailure(error, standsForStatus: divisionCode == "E401" ? 401 : nil)
    }
}

/// What the server said when it said no, whatever the HTTP status that carried it.
struct EnvelopeError: Error, Equatable {
    struct Tokens: Decodable, Equatable { let accessToken: String; let refreshToken: String }

    let status: Int
    let divisionCode: String
    let message: String
    let tokens: Tokens?
}

enum MemberAPI: Endpoint {
    case signIn(email: String, password: String)
    case refresh(refreshToken: String)
    case me
    case avatar(MultipartForm)

    var baseURL: URL { URL(string: "https://api.example.kr/v1")! }
    var path: String {
        switch self {
        case .signIn: return "/auth/sign-in"
        case .refresh: return "/auth/refresh"
        case .me: return "/members/me"
        case .avatar: return "/members/me/avatar"
        }
    }
    var method: HTTPMethod {
        switch self {
        case .me: return .get
        case .avatar: return .put
        case .signIn, .refresh: return .post
        }
    }
    var body: RequestBody {
        switch self {
        case let .signIn(email, password): return .json(["email": email, "password": password])
        case let .refresh(token): return .json(["refreshToken": token])
        case .me: return .none
        case let .avatar(form): return .multipart(form)
        }
    }
    var requiresAuthentication: Bool {
        switch self {
        case .me, .avatar: return true
        case .signIn, .refresh: return false
        }
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
    var avatarURL: URL? = nil
}

func makeMemberStore() -> any CredentialStore {
    #if canImport(Security)
    return KeychainCredentialStore(service: "kr.example.app.auth", account: "member")
    #else
    return InMemoryCredentialStore()   // Linux has no Keychain
    #endif
}

func makeMemberAuth(store: any CredentialStore) -> AuthInterceptor {
    AuthInterceptor(baseURL: URL(string: "https://api.example.kr/v1")!, store: store) { credential, network in
        try await network.request(MemberAPI.refresh(refreshToken: credential.refreshToken), as: MemberTokens.self).credential
    }
}

func makeNetwork(store: any CredentialStore) -> (provider: NetworkProvider, auth: AuthInterceptor) {
    let auth = makeMemberAuth(store: store)
    return (NetworkProvider(envelope: EnvelopeFormat(GeneralResponse.self), interceptor: auth), auth)
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
            let tokens = try await network.request(MemberAPI.signIn(email: email, password: password), as: MemberTokens.self)
            try await auth.signIn(with: tokens.credential)
            return .signedIn
        } catch let error as EnvelopeError where error.divisionCode == "E009" {
            guard let tokens = error.tokens else { throw error }
            try await auth.signIn(with: Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken))
            return .signUpIncomplete
        }
    }

    func me() async throws -> Member {
        try await network.request(MemberAPI.me, as: Member.self)
    }

    func updateAvatar(_ photo: URL, progress: ProgressReporter? = nil) async throws -> Member {
        let form = MultipartForm([.file("avatar", at: photo, contentType: "image/jpeg")])
        return try await network.upload(MemberAPI.avatar(form), as: Member.self, progress: progress)
    }
}

/// The page's app wiring.
func makeMembers() -> MemberRepository {
    let (provider, auth) = makeNetwork(store: makeMemberStore())
    let members = MemberRepository(network: provider, auth: auth)
    return members
}

/// The repository on the mock server, wired as the app wires it.
func makeMembers(on server: MockServer, store: InMemoryCredentialStore) -> MemberRepository {
    let auth = makeMemberAuth(store: store)
    let provider = NetworkProvider(
        envelope: EnvelopeFormat(GeneralResponse.self), configuration: server.makeConfiguration(basedOn: .ephemeral), interceptor: auth)
    return MemberRepository(network: provider, auth: auth)
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
        let members = makeMembers(on: server, store: store)

        #expect(try await members.signIn(email: "kim@example.kr", password: "pw") == .signUpIncomplete)
        #expect(try await store.load()?.accessToken == "a-1")
        #expect(try await members.me() == Member(id: 7, nickname: "홍길동"))
        #expect(server.requests(.get, "/v1/members/me").first?.header("Authorization") == "Bearer a-1")
    }

    @Test func anExpiredTokenInsideA200IsRefreshedOnce() async throws {
        let server = MockServer()
        server.stub(.post, "/v1/auth/refresh", .json(raw: #"{"status":200,"divisionCode":"S000","message":"OK","data":{"accessToken":"a-2","refreshToken":"r-2"}}"#))
        server.stub(.get, "/v1/members/me") { request in
            request.header("Authorization") == "Bearer a-2"
                ? .json(raw: #"{"status":200,"divisionCode":"S000","message":"OK","data":{"id":7,"nickname":"Kim"}}"#)
                : .json(raw: #"{"status":200,"divisionCode":"E401","message":"expired","data":null}"#)   // a 200 that says no
        }
        let store = InMemoryCredentialStore(Credential(accessToken: "a-1", refreshToken: "r-1"))
        let members = makeMembers(on: server, store: store)

        #expect(try await members.me() == Member(id: 7, nickname: "Kim"))
        #expect(try await store.load()?.refreshToken == "r-2")
        #expect(server.requests(.post, "/v1/auth/refresh").count == 1)
    }

    @Test func aRefusedRefreshInsideA200EndsTheSession() async throws {
        let server = MockServer()
        server.stub(.post, "/v1/auth/refresh", .json(raw: #"{"status":200,"divisionCode":"E401","message":"refresh token expired","data":null}"#))
        server.stub(.get, "/v1/members/me", .json(raw: #"{"status":200,"divisionCode":"E401","message":"expired","data":null}"#))
        let store = InMemoryCredentialStore(Credential(accessToken: "a-1", refreshToken: "r-1"))
        let members = makeMembers(on: server, store: store)
        let events = members.auth.events()

        await #expect(throws: NetworkError.sessionExpired) { try await members.me() }
        #expect(try await store.load() == nil)
        var iterator = events.makeAsyncIterator()
        _ = await iterator.next()                                  // refreshStarted
        let told = await iterator.next()
        #expect({ if case .sessionExpired? = told { return true } else { return false } }())
    }

    @Test func anAvatarUploadReturnsTheUpdatedMember() async throws {
        let server = MockServer()
        server.stub(.put, "/v1/members/me/avatar", .json(raw: #"""
            {"status":200,"divisionCode":"S000","message":"OK",
             "data":{"id":7,"nickname":"Kim","avatarURL":"https://cdn.example.kr/7.jpg"}}
            """#))
        let photo = FileManager.default.temporaryDirectory.appendingPathComponent("avatar-\(UUID().uuidString).jpg")
        try Data(repeating: 0xFF, count: 2_048).write(to: photo)
        defer { try? FileManager.default.removeItem(at: photo) }
        let members = makeMembers(on: server, store: InMemoryCredentialStore(Credential(accessToken: "a-1", refreshToken: "r-1")))

        let member = try await members.updateAvatar(photo)
        #expect(member.avatarURL == URL(string: "https://cdn.example.kr/7.jpg"))
        #expect(try server.requests[0].multipartParts().map(\.name) == ["avatar"])
    }

    @Test func theAppWiringPutsTheInterceptorOnTheInjectedProvider() throws {
        let members = makeMembers()
        let provider = try #require(members.network as? NetworkProvider)
        #expect(provider.interceptor as? AuthInterceptor === members.auth)
        #expect(provider.envelope?.payloadKeyPath == "data")
    }

    @Test func aSuccessWithoutDataIsADecodingErrorNamingIt() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/members/me", .json(raw: #"{"status":200,"divisionCode":"S000","message":"OK","data":null}"#))
        let members = makeMembers(on: server, store: InMemoryCredentialStore(Credential(accessToken: "a", refreshToken: "r")))
        await #expect { try await members.me() } throws: { error in
            guard case let NetworkError.decodingFailed(type, _) = error else { return false }
            return type == #"Member at key path "data""# && "\(error)".contains("data")
        }
    }

    @Test func anE009WithoutTokensThrowsTheEnvelopeError() async throws {
        // The repository's `guard let tokens` fires: the server's E009 reaches the caller, nobody is signed in.
        let server = MockServer()
        server.stub(.post, "/v1/auth/sign-in", .json(raw: #"{"status":400,"divisionCode":"E009","message":"x","data":null}"#, statusCode: 400))
        let store = InMemoryCredentialStore()
        let members = makeMembers(on: server, store: store)
        await #expect(throws: EnvelopeError(status: 400, divisionCode: "E009", message: "x", tokens: nil)) {
            try await members.signIn(email: "a", password: "b")
        }
        #expect(try await store.load() == nil)
    }
}
