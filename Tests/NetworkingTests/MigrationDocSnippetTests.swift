// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of our side of the snippets in Docs/MigratingFromAlamofire.md and Docs/MigratingFromMoya.md.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

/// The user the migration pages decode.
struct MigrationUser: Codable, Equatable, Sendable {
    let id: Int
    let name: String
}

struct GetUser: Endpoint {
    let id: Int
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/users/\(id)" }
}

func loadUser(with provider: NetworkProvider) async throws -> MigrationUser {
    try await provider.request(GetUser(id: 1), as: MigrationUser.self)
}

struct TraceAdapter: RequestAdapter {
    func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest {
        var request = request
        request.setValue(UUID().uuidString, forHTTPHeaderField: "X-Trace-ID")
        return request
    }
}

func loadTracedUser(with provider: NetworkProvider) async throws -> MigrationUser {
    try await provider.request(GetUser(id: 1), as: MigrationUser.self, adapter: TraceAdapter())
}

struct RefreshTokens: Endpoint {
    let refreshToken: String
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/auth/refresh" }
    var method: HTTPMethod { .post }
    var body: RequestBody { .json(["refreshToken": refreshToken]) }
    var requiresAuthentication: Bool { false }
}

struct RefreshedTokens: Decodable {
    let accessToken: String
    let refreshToken: String
}

func makeAuthenticatedProvider(store: any CredentialStore) -> NetworkProvider {
    let auth = AuthInterceptor(baseURL: URL(string: "https://api.example.com/v1")!, store: store) { credential, network in
        let tokens = try await network.request(RefreshTokens(refreshToken: credential.refreshToken), as: RefreshedTokens.self)
        return Credential(accessToken: tokens.accessToken, refreshToken: tokens.refreshToken)
    }
    return NetworkProvider(interceptor: auth)
}

/// The page's retry policy, wired.
func makeRetryingProvider() -> NetworkProvider {
    let policy = RetryPolicy(retryLimit: 3, exponentialBackoffBase: 2, exponentialBackoffScale: 0.5)
    let retryingProvider = NetworkProvider(interceptor: Interceptor(interceptors: [policy]))
    return retryingProvider
}

func makeLoggingProvider() -> NetworkProvider {
    NetworkProvider(monitors: [NetworkLogger(verbosity: .basic)])
}

func curl(for endpoint: some Endpoint) throws -> String {
    try endpoint.urlRequest().cURLDescription   // Authorization, cookies and secret fields are redacted
}

struct UploadPhoto: Endpoint {
    let photo: URL
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/me/photo" }
    var method: HTTPMethod { .post }
    var body: RequestBody { .multipart(MultipartForm([.file("photo", at: photo)])) }
}

func uploadWithProgress(_ photo: URL, with provider: NetworkProvider) async throws {
    let (progress, reporter) = TransferProgress.makeStream()
    async let response = provider.upload(UploadPhoto(photo: photo), progress: reporter)
    for await step in progress { print(step.fraction ?? 0) }
    _ = try await response
}

struct LargeFile: Endpoint {
    var baseURL: URL { URL(string: "https://cdn.example.com")! }
    var path: String { "/files/large.zip" }
}

func downloadLargeFile(to destination: URL, resuming saved: ResumableDownload?, with provider: NetworkProvider) async throws -> ResumableDownload? {
    do {
        _ = try await provider.download(LargeFile(), to: destination, resuming: saved)
        return nil                                   // whole, at `destination`
    } catch let interrupted as DownloadInterrupted {
        return interrupted.resumable                 // Codable: store it, pass it back later, after a relaunch too
    }
}

enum UserService: Endpoint {
    case user(id: Int)
    case search(query: String)
    case rename(id: Int, name: String)

    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String {
        switch self {
        case .user(let id), .rename(let id, _): return "/users/\(id)"
        case .search: return "/users/search"
        }
    }
    var method: HTTPMethod {
        if case .rename = self { return .patch }
        return .get
    }
    var queryItems: [URLQueryItem] {
        guard case .search(let query) = self else { return [] }
        return [URLQueryItem(name: "q", value: query)]
    }
    var body: RequestBody {
        guard case .rename(_, let name) = self else { return .none }
        return .json(["name": name])
    }
}

func searchUsers(_ query: String, with provider: NetworkProvider) async throws -> [MigrationUser] {
    try await provider.request(UserService.search(query: query), as: [MigrationUser].self)
}

struct ServiceError: Error, Decodable {
    let code: String
    let message: String
}

func makeServiceProvider() -> NetworkProvider {
    NetworkProvider(
        interceptor: Interceptor(adapters: [TraceAdapter()]),
        errorMapper: { response in try? JSONDecoder().decode(ServiceError.self, from: response.data) },
        monitors: [NetworkLogger()]
    )
}

@Suite("Migration guide snippets")
struct MigrationDocSnippetTests {
    @Test func searchReturnsTheStubbedUsers() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/search", .json([MigrationUser(id: 1, name: "Kim")]))
        let users = try await searchUsers("Kim", with: server.makeProvider())
        #expect(users == [MigrationUser(id: 1, name: "Kim")])
        #expect(server.requests.first?.query("q") == "Kim")
    }

    @Test func theAlamofireSideBySideSnippetsWork() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(MigrationUser(id: 1, name: "Kim")))
        server.stub(.post, "/v1/me/photo", .status(204))
        let provider = server.makeProvider()
        #expect(try await loadUser(with: provider) == MigrationUser(id: 1, name: "Kim"))
        #expect(try await loadTracedUser(with: provider).id == 1)
        #expect(server.requests.last?.header("X-Trace-ID")?.isEmpty == false)
        let photo = FileManager.default.temporaryDirectory.appendingPathComponent("migration-\(UUID().uuidString).jpg")
        try Data(repeating: 1, count: 1_000).write(to: photo)
        defer { try? FileManager.default.removeItem(at: photo) }
        try await uploadWithProgress(photo, with: provider)
        #expect(try server.requests(.post, "/v1/me/photo").first?.multipartParts().first?.filename == photo.lastPathComponent)
        #expect(try curl(for: GetUser(id: 1)).contains("https://api.example.com/v1/users/1"))
        #expect(makeRetryingProvider().interceptor != nil)
        #expect(makeLoggingProvider().interceptor == nil)
    }

    @Test func anInterruptedDownloadIsContinuedFromItsResumable() async throws {
        // GIVEN a file served with ranges, whose first answer drops after 6,000 bytes, and no retry policy
        let body = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0) })
        let file = MockResource(body: body, etag: #""v1""#)
        let server = MockServer()
        server.stub(.get, "/files/large.zip") { request in
            let answer = file.response(to: request)
            guard request.header("Range") == nil else { return answer }
            return .chunked([answer.body.prefix(6_000)], headers: answer.headers, failingWith: URLError(.networkConnectionLost))
        }
        let provider = server.makeProvider()
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("migration-\(UUID().uuidString).zip")
        defer { try? FileManager.default.removeItem(at: destination) }
        // WHEN the page's function is called, then called again with what it returned
        let saved = try #require(try await downloadLargeFile(to: destination, resuming: nil, with: provider))
        let again = try await downloadLargeFile(to: destination, resuming: saved, with: provider)
        // THEN the second call asked only for the rest, and the file is whole
        #expect(again == nil)
        #expect(server.requests.last?.header("Range") == "bytes=6000-")
        #expect(file.partialResponses == 1)
        #expect(try Data(contentsOf: destination) == body)
    }

    @Test func theAuthenticatedProviderRefreshesThroughItsOwnNetwork() async throws {
        let store = InMemoryCredentialStore(Credential(accessToken: "a", refreshToken: "r"))
        let provider = makeAuthenticatedProvider(store: store)
        let auth = try #require(provider.interceptor as? AuthInterceptor)
        #expect(try await auth.currentCredential()?.accessToken == "a")
    }

    @Test func theMoyaStyleEndpointBuildsItsRequests() throws {
        #expect(try UserService.search(query: "홍길동").url().absoluteString == "https://api.example.com/v1/users/search?q=%ED%99%8D%EA%B8%B8%EB%8F%99")
        let rename = try UserService.rename(id: 3, name: "Lee").urlRequest()
        #expect(rename.httpMethod == "PATCH")
        #expect(rename.httpBody == Data(#"{"name":"Lee"}"#.utf8))
        #expect(makeServiceProvider().interceptor != nil)
    }
}
