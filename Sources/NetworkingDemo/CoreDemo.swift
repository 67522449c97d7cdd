import Foundation
import Networking
import NetworkingTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One request's life: built, adapted, a 503 retried, decoded.
enum CoreDemo {
    struct User: Codable, Sendable {
        let id: Int
        let name: String
    }

    enum UserAPI: Endpoint {
        case user(id: Int)
        var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
        var path: String {
            switch self {
            case .user(let id): return "/users/\(id)"
            }
        }
    }

    /// Prints what the pipeline does to the request, and retries a 503 once.
    struct TracingInterceptor: RequestInterceptor {
        func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest {
            var request = request
            request.setValue("networking-demo", forHTTPHeaderField: "X-Client")
            print("adapted  attempt \(context.retryCount + 1): + X-Client: networking-demo")
            return request
        }

        func retry(_ request: URLRequest, dueTo error: any Error, response: Response?, context: RequestContext) async -> RetryResult {
            guard response?.statusCode == 503, context.retryCount == 0 else { return .doNotRetry }
            print("retry    \(response?.statusCode ?? 0) is transient: sending again")
            return .retry
        }
    }

    static func run() async throws {
        print("== One request's life")
        let server = MockServer()
        server.stub(.get, "/v1/users/1") { [weak server] request in
            // The first attempt meets a busy server; the second gets the user.
            let attempt = server?.requests.count ?? 0
            let answer: MockResponse = attempt == 1 ? .status(503) : .json(User(id: 1, name: "Kim"))
            print("sent     \(request.method) \(request.path) → server answered \(answer.statusCode)")
            return answer
        }
        let provider = server.makeProvider(interceptor: TracingInterceptor())
        let endpoint = UserAPI.user(id: 1)
        let built = try endpoint.urlRequest()
        print("built    \(built.httpMethod ?? "GET") \(built.url?.absoluteString ?? "")")
        let user = try await provider.request(endpoint, as: User.self)
        print("decoded  User(id: \(user.id), name: \"\(user.name)\")")
        print()
    }
}
