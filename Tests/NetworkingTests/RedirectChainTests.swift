import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Which headers a hop carries, decided on the request as it is finally sent (after a `.modify`), by the
/// path the whole chain took (RFC 9110 §15.4: a redirect names another resource, which may be anyone's).
@Suite("Redirect chains: headers by where the hop really goes", SuiteTimeLimit.oneMinute)
struct RedirectChainTests {
    /// An interceptor that sets a session-bearing `User-Agent` (a "safe" header by name) and a token.
    static let interceptor = Interceptor(adapters: [
        HeaderAdapter(name: "User-Agent", value: "App/1 session=s3cr3t"), HeaderAdapter(name: "Authorization", value: "Bearer secret-token"),
    ])

    @Test("a .modify that points a same-origin hop at another origin strips what the interceptors set (RFC 9110 §15.4)")
    func aModifiedHopToAnotherOriginIsStrippedLikeADirectOne() async throws {
        // GIVEN an API that redirects within itself, and a modifier that sends that hop to a CDN instead
        let server = MockServer()
        server.stub { request in
            request.url.host == "api.example.com" && request.path == "/v1/start"
                ? .status(302, headers: ["Location": "/v1/next"]) : .json(raw: "{}")
        }
        let toCDN = RedirectBehavior.modify { next, _ in
            var next = next
            next.url = URL(string: "https://cdn.example.net/file")
            return next
        }
        let provider = server.makeProvider(interceptor: Self.interceptor)
        // WHEN a GET with an endpoint header is sent
        _ = try await provider.response(RedirectingEndpoint(method: .get, headers: ["Accept": "application/json"], redirectBehavior: toCDN))
        // THEN the CDN got neither the token nor the interceptor's User-Agent, as a direct redirect there would
        let cdn = try #require(server.requests.last)
        #expect(cdn.url.host == "cdn.example.net")
        #expect(cdn.header("Authorization") == nil)
        #expect(cdn.header("User-Agent")?.contains("s3cr3t") != true)
        #expect(cdn.header("Accept") == "application/json")
    }

    @Test("a .modify that adds its own header to a hop it sends elsewhere keeps that header, and only that")
    func aModifiersOwnHeaderGoesAlong() async throws {
        // GIVEN a same-origin redirect a modifier sends to a CDN with a header of its own
        let server = MockServer()
        server.stub { request in
            request.path == "/v1/start" ? .status(307, headers: ["Location": "/v1/next"]) : .json(raw: "{}")
        }
        let toCDN = RedirectBehavior.modify { next, _ in
            var next = next
            next.url = URL(string: "https://cdn.example.net/file")
            next.setValue("signed-by-app", forHTTPHeaderField: "X-CDN-Ticket")
            return next
        }
        // WHEN it is sent
        _ = try await server.makeProvider(interceptor: Self.interceptor).response(RedirectingEndpoint(method: .get, redirectBehavior: toCDN))
        // THEN the CDN got the modifier's header and not the interceptors'
        let cdn = try #require(server.requests.last)
        #expect(cdn.header("X-CDN-Ticket") == "signed-by-app")
        #expect(cdn.header("Authorization") == nil && cdn.header("User-Agent")?.contains("s3cr3t") != true)
    }

    /// A server where the API sends `/v1/start` to a CDN, which sends it back to `back` on the API.
    static func bouncingServer(back: String) -> MockServer {
        let server = MockServer()
        server.stub { request in
            switch (request.url.host ?? "", request.path) {
            case ("api.example.com", "/v1/start"):
                return .status(302, headers: ["Location": "https://cdn.example.net/a"])
            case ("cdn.example.net", _): return .status(302, headers: ["Location": back])
            default: return .json(raw: "{}")
            }
        }
        return server
    }

    @Test("once a chain has left the API, a hop back to another API path carries no credentials (RFC 9110 §15.4)")
    func aForeignHopCannotAimTheTokenAtAnotherAPIPath() async throws {
        // GIVEN the API redirects a GET to a CDN, which redirects it back to another API path
        let server = Self.bouncingServer(back: "https://api.example.com/v1/admin/export")
        let provider = server.makeProvider(interceptor: Self.interceptor)
        // WHEN the call is made
        _ = try await provider.response(RedirectingEndpoint(method: .get, headers: ["X-Api-Key": "key-1"]))
        // THEN the API's other path was reached without the token, the key or the interceptor's User-Agent
        let seen = server.requests.map { ($0.url.host ?? "", $0.path) }
        #expect(seen.map(\.1) == ["/v1/start", "/a", "/v1/admin/export"])
        let back = try #require(server.requests.last)
        #expect(back.header("Authorization") == nil)
        #expect(back.header("X-Api-Key") == nil)
        #expect(back.header("User-Agent")?.contains("s3cr3t") != true)
    }

    @Test("a modifier cannot bring the token back to another API path after the chain left (RFC 9110 §15.4)")
    func aModifierCannotAimTheTokenBackEither() async throws {
        // GIVEN the API redirects to a CDN, whose redirect a modifier points back at another API path
        let server = Self.bouncingServer(back: "https://cdn.example.net/b")
        let back = RedirectBehavior.modify { next, _ in
            guard next.url?.path == "/b" else { return next }
            var next = next
            next.url = URL(string: "https://api.example.com/v1/other")
            return next
        }
        // WHEN the call is made
        _ = try await server.makeProvider(interceptor: Self.interceptor).response(RedirectingEndpoint(method: .get, redirectBehavior: back))
        // THEN the API's other path got no token
        let last = try #require(server.requests.last)
        #expect(last.path == "/v1/other")
        #expect(last.header("Authorization") == nil)
    }

    @Test("a chain that comes back to the exact URL the call started from gets its headers again")
    func aBounceBackToTheStartingURLIsAuthenticated() async throws {
        // GIVEN the API sends a GET to a CDN (e.g. to set a cookie), which sends it back to the same URL
        let server = MockServer()
        let visits = Recorder<Int>()
        server.stub { request in
            switch request.url.host ?? "" {
            case "api.example.com":
                visits.append(1)
                return visits.count == 1 ? .status(302, headers: ["Location": "https://cdn.example.net/a"]) : .json(raw: "{}")
            default: return .status(302, headers: ["Location": "https://api.example.com/v1/start"])
            }
        }
        // WHEN the call is made
        _ = try await server.makeProvider(interceptor: Self.interceptor).response(RedirectingEndpoint(method: .get))
        // THEN the URL the app asked for got the token both times, the CDN never
        let seen = server.requests.map { ($0.url.host ?? "", $0.header("Authorization")) }
        #expect(seen.map(\.0) == ["api.example.com", "cdn.example.net", "api.example.com"])
        #expect(seen.map(\.1) == ["Bearer secret-token", nil, "Bearer secret-token"])
    }

    @Test("a POST that a 303 sends through another host does not come back as an authenticated GET of its URL")
    func aPostBouncedBackAsAGetIsNotAuthenticated() async throws {
        // GIVEN the API answers a POST with 303 to a CDN, which redirects back to the URL the POST went to
        let server = MockServer()
        server.stub { request in
            switch (request.url.host ?? "", request.method) {
            case ("api.example.com", "POST"): return .status(303, headers: ["Location": "https://cdn.example.net/a"])
            case ("api.example.com", _): return .json(raw: "{}")
            default: return .status(302, headers: ["Location": "https://api.example.com/v1/start"])
            }
        }
        // WHEN the POST is made
        _ = try await server.makeProvider(interceptor: Self.interceptor).response(RedirectingEndpoint(method: .post))
        // THEN only the POST the app authorised carried the token: the GET a foreign host chose did not (RFC 9110 §15.4)
        let seen = server.requests.map { ($0.method, $0.url.host ?? "", $0.header("Authorization")) }
        #expect(seen.map(\.1) == ["api.example.com", "cdn.example.net", "api.example.com"])
        #expect(seen.map(\.0) == ["POST", "GET", "GET"])
        #expect(seen.map(\.2) == ["Bearer secret-token", nil, nil])
    }

    @Test("a hop that moves within the API before the chain ever left keeps every header")
    func aSameOriginHopKeepsItsHeaders() async throws {
        // GIVEN an API that redirects within itself
        let server = MockServer()
        server.stub { request in
            request.path == "/v1/start" ? .status(301, headers: ["Location": "/v1/moved"]) : .json(raw: "{}")
        }
        // WHEN an authenticated GET is sent
        _ = try await server.makeProvider(interceptor: Self.interceptor).response(RedirectingEndpoint(method: .get))
        // THEN the new path got the token and the interceptor's User-Agent
        let moved = try #require(server.requests.last)
        #expect(moved.path == "/v1/moved")
        #expect(moved.header("Authorization") == "Bearer secret-token")
        #expect(moved.header("User-Agent") == "App/1 session=s3cr3t")
    }
}
