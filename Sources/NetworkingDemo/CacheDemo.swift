import Foundation
import Networking
import NetworkingTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A profile the app shows often: answered from the cache while fresh, revalidated with a 304 when
/// stale, and shown from the cache when the network is gone.
enum CacheDemo {
    struct Profile: Codable, Sendable {
        let name: String
    }

    struct Me: Endpoint {
        var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
        var path: String { "/me" }
        var cachePolicy: CachePolicy? { .staleIfError(upTo: 86_400) }
    }

    static func run() async throws {
        print("== A response cache: fresh, revalidated, offline")
        let server = MockServer()
        let clock = ManualClock()
        let profile = MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60")
        server.stub(.get, "/v1/me", resource: profile)
        let provider = server.makeProvider(cache: MemoryResponseCache(), now: clock.now)

        try await show("first call", provider)
        clock.advance(by: 30)
        try await show("30 s later", provider)
        clock.advance(by: 60)
        try await show("90 s later", provider)
        server.stub(.get, "/v1/me", .failure(URLError(.notConnectedToInternet)))
        clock.advance(by: 3_600)
        try await show("offline, an hour later", provider)
        print("server   \(profile.fullResponses) full answer, \(profile.notModifiedResponses) × 304")
        print()
    }

    private static func show(_ moment: String, _ provider: NetworkProvider) async throws {
        let response = try await provider.response(Me())
        let name = try JSONDecoder().decode(Profile.self, from: response.data).name
        let cache = response.report.cache.map { "\($0)" } ?? "not cached"
        let sent = response.report.statusCodes.map { $0.map(String.init) ?? "no answer" }
        print(
            "\(moment.padding(toLength: 24, withPad: " ", startingAt: 0)) \(name) — cache: \(cache), server answered: \(sent.isEmpty ? "nothing sent" : sent.joined(separator: ", "))"
        )
    }
}
