import Foundation
import Networking
import NetworkingTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A file the API moved to a CDN: the provider follows the redirect itself, and the token stays home.
enum RedirectDemo {
    struct Report: Endpoint {
        var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
        var path: String { "/reports/7" }
    }

    /// Puts the API's token on requests for the API only (as an `AuthInterceptor` would).
    struct Token: RequestAdapter {
        func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest {
            var request = request
            request.setValue("Bearer demo-secret-token", forHTTPHeaderField: "Authorization")
            return request
        }
    }

    static func run() async throws {
        print("== A redirect to a CDN")
        let server = MockServer()
        server.stub { request in
            let token = request.header("Authorization") == nil ? "no token" : "with a token"
            print("server   \(request.method) \(request.url.host ?? "")\(request.path) (\(token))")
            if request.url.host == "api.example.com" {
                return .status(302, headers: ["Location": "https://cdn.example.net/r/7.json?access_token=signed-cdn-key"])
            }
            return .json(raw: #"{"title":"Q3"}"#)
        }
        let provider = server.makeProvider(interceptor: Interceptor(adapters: [Token()], retriers: []))
        let response = try await provider.response(Report())
        for hop in response.report.redirects { print("hop      \(hop)") }
        print("answer   \(response.statusCode) from \(response.httpResponse.url?.host ?? "")")
        print()
    }
}
