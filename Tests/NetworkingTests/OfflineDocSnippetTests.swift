// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in Docs/Offline.md: keep each identical to the page.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

struct Search: Endpoint {
    let query: String
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/search" }
    var queryItems: [URLQueryItem] { [URLQueryItem(name: "q", value: query)] }
    var offlineBehavior: OfflineBehavior? { .fail }   // the user is typing: say "offline" now
}

@Suite("Docs/Offline.md snippets")
struct OfflineDocSnippetTests {
    @Test func connectivity() async throws {
        let connectivity = ManualConnectivity()
        let provider = NetworkProvider(connectivity: connectivity)
        connectivity.set(online: false)   // calls wait from now on
        connectivity.set(online: true)    // every waiting call sends now
        #expect(provider.connectivity.isOnline)
        #expect(provider.offlineBehavior == .wait)
        #if !canImport(Network) || os(watchOS)
        #expect(NetworkProvider.defaultConnectivity is AlwaysOnline)
        #endif
    }

    @Test func waitingAndFailingFast() async throws {
        // GIVEN a provider offline, whose server answers once it is back
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(["id": 1]))
        server.stub(.get, "/v1/search", .json(["results": [String]()]))
        let connectivity = ManualConnectivity(isOnline: false)
        let provider = server.makeProvider(connectivity: connectivity)

        // Failing fast: the search says "offline" at once, sending nothing
        var saidOffline = false
        do {
            _ = try await provider.response(Search(query: "kim"))
        } catch NetworkError.offline {
            // show "You are offline"
            saidOffline = true
        }
        #expect(saidOffline)
        #expect(server.requests.isEmpty)

        // Waiting: the user call sends once the path is back, in one attempt
        let back = Task {
            while connectivity.waitingCount == 0 { try await Task.sleep(nanoseconds: 1_000_000) }
            connectivity.set(online: true)
        }
        let response = try await provider.response(UserAPI.user(id: 1))
        print(response.report.attempts, response.report.connectivityWait)   // 1 2.5: one attempt, after 2.5 s offline
        try await back.value
        #expect(response.report.attempts == 1)
        #expect(response.report.connectivityWait > 0)
    }
}
