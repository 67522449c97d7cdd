import Foundation
import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A user as the test API returns it.
struct User: Codable, Equatable, Sendable {
    let id: Int
    let name: String
}

/// A configurable endpoint for tests.
struct TestEndpoint: Endpoint {
    var baseURL = URL(string: "https://api.example.com/v1/")!
    var path = "/users/1"
    var method: HTTPMethod = .get
    var headers: [String: String] = [:]
    var queryItems: [URLQueryItem] = []
    var body: RequestBody = .none
    var timeout: TimeInterval?
    var acceptableStatusCodes: Set<Int> = Set(200..<300)
    var requiresAuthentication = true
}
