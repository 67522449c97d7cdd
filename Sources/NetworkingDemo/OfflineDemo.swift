import Foundation
import Networking
import NetworkingTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The network goes away: a cached profile still answers at once, marked stale; a call made offline waits
/// for the network, spending no attempt, and goes through when it comes back; a search that would rather
/// say "offline" fails at once.
enum OfflineDemo {
    struct Profile: Codable, Sendable {
        let name: String
    }

    struct Me: Endpoint {
        var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
        var path: String { "/me" }
        var cachePolicy: CachePolicy? { .staleIfError(upTo: 86_400) }
    }

    struct Feed: Endpoint {
        var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
        var path: String { "/feed" }
    }

    struct Search: Endpoint {
        var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
        var path: String { "/search" }
        var offlineBehavior: OfflineBehavior? { .fail }
    }

    static func run() async throws {
        print("== Offline: the cache answers, calls wait for the network")
        let server = MockServer()
        let clock = ManualClock()
        let connectivity = ManualConnectivity()
        server.stub(.get, "/v1/me", resource: MockResource.json(Profile(name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60"))
        server.stub(.get, "/v1/feed", .json(["posts": 3]))
        server.stub(.get, "/v1/search", .json(["hits": 0]))
        let provider = server.makeProvider(connectivity: connectivity, cache: MemoryResponseCache(), now: clock.now)
        _ = try await provider.response(Me())

        clock.advance(by: 90)
        connectivity.set(online: false)
        let sentOnline = server.requests.count
        let cached = try await provider.response(Me())
        let name = try JSONDecoder().decode(Profile.self, from: cached.data).name
        print("offline, cached profile  \(name) — cache: \(cached.report.cache.map { "\($0)" } ?? "none"), \(describe(cached.report))")

        do {
            let answer = try await provider.response(Search())
            print("offline, search (.fail)  answered \(answer.statusCode)")
        } catch NetworkError.offline {
            print("offline, search (.fail)  NetworkError.offline at once, nothing sent")
        }

        let feed = Task { try await provider.response(Feed()) }
        while connectivity.waitingCount == 0 { await Task.yield() }
        print("offline, feed            waiting for the network (\(connectivity.waitingCount) call waiting)")
        let sentOffline = server.requests.count - sentOnline
        connectivity.set(online: true)
        let report = try await feed.value.report
        print("back online, feed        \(describe(report)), waited \(String(format: "%.1f", report.connectivityWait * 1_000)) ms for the network")
        let received = server.requests.map { "\($0.method) \($0.path)" }.joined(separator: ", ")
        print("server   \(sentOffline) requests while offline; in all: \(received)")
        print()
    }

    private static func describe(_ report: CallReport) -> String {
        let sent = report.statusCodes.map { $0.map(String.init) ?? "no answer" }
        return "\(report.attempts) attempt\(report.attempts == 1 ? "" : "s")" + (sent.isEmpty ? " (nothing sent)" : " (\(sent.joined(separator: ", ")))")
    }
}
