// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in Docs/: keep each identical to its page, so the compiler checks the docs.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

// MARK: Docs/GettingStarted.md

struct SearchUsers: Endpoint {
    let text: String
    let page: Int

    var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
    var path: String { "/users/search" }
    var queryItems: [URLQueryItem] {
        [URLQueryItem(name: "q", value: text), URLQueryItem(name: "page", value: String(page))]
    }
}

struct SignIn: Endpoint {
    struct Credentials: Encodable, Sendable { let email: String; let password: String }
    let credentials: Credentials

    var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
    var path: String { "/auth/sign-in" }
    var method: HTTPMethod { .post }
    var body: RequestBody { .json(credentials) }
    var requiresAuthentication: Bool { false }
}

struct DeleteUser: Endpoint {
    let id: Int
    var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
    var path: String { "/users/\(id)" }
    var method: HTTPMethod { .delete }
}

/// Section 3's calls, compiled only: they would go to api.example.com.
func gettingStartedSendThemThroughAProvider() async throws {
    let provider = NetworkProvider()
    let users = try await provider.request(SearchUsers(text: "kim", page: 1), as: [User].self)  // decoded
    let response = try await provider.response(SearchUsers(text: "kim", page: 1))             // raw
    try await provider.request(DeleteUser(id: 3))                                              // 204-style
    _ = (users, response)
}

struct APIError: Error, Decodable {
    let status: Int
    let divisionCode: String
    let message: String
}

// MARK: Docs/Interceptors.md

struct APIKeyAdapter: RequestAdapter {
    let key: String

    func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest {
        var request = request
        request.setValue(key, forHTTPHeaderField: "X-API-Key")
        return request
    }
}

struct RetryServiceUnavailableOnce: RequestRetrier {
    func retry(_ request: URLRequest, dueTo error: any Error, response: Response?,
               context: RequestContext) async -> RetryResult {
        guard response?.statusCode == 503, context.retryCount == 0 else { return .doNotRetry }
        let seconds = response?.value(forHTTPHeaderField: "Retry-After").flatMap(TimeInterval.init) ?? 1
        return .retryWithDelay(seconds)
    }
}

struct ClientHeader: RequestInterceptor {
    func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest {
        var request = request
        request.setValue("ios/2.3", forHTTPHeaderField: "X-Client")
        return request
    }
}

struct RetryOnceOn409: RequestRetrier {
    func retry(_ request: URLRequest, dueTo error: any Error, response: Response?,
               context: RequestContext) async -> RetryResult {
        guard response?.statusCode == 409, context["RetryOnceOn409"] == nil else { return .doNotRetry }
        context["RetryOnceOn409"] = true
        return .retry
    }
}

@Suite("Doc snippets")
struct DocSnippetTests {
    @Test func gettingStartedMockSection() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/search", .json([User(id: 1, name: "Kim")]))
        server.stub(.delete, "/v1/users/3", .status(503), .status(204))          // one answer per call, last repeats
        server.stub(.get, "/v1/slow", MockResponse.status(200).delayed(by: 5))   // cancellable delay
        server.stub(.get, "/v1/offline", .failure(URLError(.notConnectedToInternet)))
        server.stub { request in                                                  // anything else
            request.header("Authorization") == nil ? .status(401) : .json(User(id: 1, name: "Kim"))
        }

        let provider = server.makeProvider()
        let found = try await provider.request(SearchUsers(text: "kim", page: 1), as: [User].self)
        let sent = server.requests(.get, "/v1/users/search")   // method, url, headers, body, as received

        #expect(found == [User(id: 1, name: "Kim")])
        #expect(sent.first?.query("q") == "kim")
        await #expect(throws: NetworkError.self) { try await provider.request(DeleteUser(id: 3)) }
        try await provider.request(DeleteUser(id: 3))
    }

    @Test func interceptorsCompose() async throws {
        let composed = Interceptor(
            adapters: [ClientHeader(), APIKeyAdapter(key: "k")],
            retriers: [RetryServiceUnavailableOnce()]
        )
        let oneOff = Interceptor(adapters: [ClosureAdapter { request, _ in
            var request = request
            request.setValue(UUID().uuidString, forHTTPHeaderField: "X-Request-ID")
            return request
        }])
        let provider = NetworkProvider(interceptor: composed)
        #expect(provider.interceptor != nil)

        let server = MockServer()
        server.stub(.delete, "/v1/users/3", MockResponse.status(503, headers: ["Retry-After": "0"]), .status(409), .status(204))
        let mocked = server.makeProvider(interceptor: Interceptor(adapters: [composed, oneOff], retriers: [composed, RetryOnceOn409()]))
        try await mocked.request(DeleteUser(id: 3))
        #expect(server.requests.count == 3)
        #expect(server.requests.allSatisfy { $0.header("X-Client") == "ios/2.3" && $0.header("X-API-Key") == "k" && $0.header("X-Request-ID") != nil })
    }

    @Test func errorMapperSnippet() async throws {
        let mapped = NetworkProvider(errorMapper: { response in
            try? JSONDecoder().decode(APIError.self, from: response.data)  // nil: keep invalidStatusCode
        })
        _ = mapped
        let server = MockServer()
        server.stub(.post, "/v1/auth/sign-in", .json(raw: #"{"status":401,"divisionCode":"E001","message":"wrong password"}"#, statusCode: 401))
        let provider = server.makeProvider(errorMapper: { response in
            try? JSONDecoder().decode(APIError.self, from: response.data)
        })
        await #expect {
            try await provider.request(SignIn(credentials: .init(email: "a@b.c", password: "pw")))
        } throws: { error in
            (error as? APIError)?.divisionCode == "E001"
        }
    }
}
