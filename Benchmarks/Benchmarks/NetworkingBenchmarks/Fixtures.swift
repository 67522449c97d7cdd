import Foundation
import Networking
import NetworkingTestSupport
import SharedFixtures

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

enum Fixture {
    static let baseURL = URL(string: "https://api.example.com/v1/")!
    /// The URL the raw `URLSession` baseline requests: the same one ``UserEndpoint`` builds.
    static let userURL = URL(string: "https://api.example.com/v1/users/1")!
    static let userPath = "/v1/users/1"

    /// A mock server answering `GET /v1/users/1` with ``User/sample``.
    static func userServer() -> MockServer {
        let server = MockServer()
        server.stub(.get, userPath, .json(User.sample))
        return server
    }
}

/// `GET /v1/users/{id}`: what the provider sends in the request benchmarks.
struct UserEndpoint: Endpoint {
    let id: Int
    var baseURL: URL { Fixture.baseURL }
    var path: String { "/users/\(id)" }
}

/// A search endpoint with ten query items (some needing percent-encoding) and a JSON body: what the
/// request-building benchmark builds.
struct SearchEndpoint: Endpoint {
    struct Filter: Codable, Sendable {
        var text: String
        var tags: [String]
        var minimumScore: Double
        var includeArchived: Bool
        var owner: User
    }

    let filter: Filter

    var baseURL: URL { Fixture.baseURL }
    var path: String { "/search/users" }
    var method: HTTPMethod { .post }
    var headers: [String: String] { ["Accept": "application/json"] }
    var queryItems: [URLQueryItem] {
        [
            URLQueryItem(name: "q", value: "kim lee"),
            URLQueryItem(name: "page", value: "2"),
            URLQueryItem(name: "per_page", value: "50"),
            URLQueryItem(name: "sort", value: "created_at"),
            URLQueryItem(name: "order", value: "desc"),
            URLQueryItem(name: "filter", value: "role=admin&active=true"),
            URLQueryItem(name: "since", value: "2024-01-01T00:00:00+09:00"),
            URLQueryItem(name: "city", value: "서울"),
            URLQueryItem(name: "fields", value: "id,name,email"),
            URLQueryItem(name: "include_archived", value: "false"),
        ]
    }
    var body: RequestBody { .json(filter) }

    static let sample = SearchEndpoint(
        filter: Filter(
            text: "kim", tags: ["a", "b", "c"], minimumScore: 0.75, includeArchived: false, owner: User.sample
        ))
}

/// What a caller of raw `URLSession` does for the same request: route it to the mock, send it with
/// `data(for:)`, check the status, decode with `JSONDecoder`.
struct RawClient: Sendable {
    let server: MockServer
    let session: URLSession
    let decoder = JSONDecoder()

    init(server: MockServer) {
        self.server = server
        self.session = URLSession(configuration: server.makeConfiguration())
    }

    func user() async throws -> User {
        let request = server.route(URLRequest(url: Fixture.userURL))
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) else {
            throw URLError(.badServerResponse)
        }
        return try decoder.decode(User.self, from: data)
    }
}

enum BenchmarkFailure: Error, CustomStringConvertible {
    case unexpected(String)
    var description: String {
        switch self {
        case .unexpected(let message): return message
        }
    }
}
