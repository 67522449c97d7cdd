import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A stub matches the path exactly as it goes on the wire (RFC 9112 §3.2: the request-target is the
/// percent-encoded path): a trailing slash is significant and `%2F` is not `/` (RFC 3986 §2.2), so a test
/// passes only if production's server would see the same path.
@Suite("MockServer path matching", SuiteTimeLimit.oneMinute)
struct MockPathMatchingTests {
    /// The status the server answers a GET of `url` with, sent through a plain session routed to it.
    static func status(of url: String, on server: MockServer) async throws -> Int {
        let session = URLSession(configuration: server.makeConfiguration())
        defer { session.finishTasksAndInvalidate() }
        let (_, response) = try await session.data(for: server.route(URLRequest(url: try #require(URL(string: url)))))
        return try #require(response as? HTTPURLResponse).statusCode
    }

    @Test("a trailing slash is significant: /v1/users/ is not /v1/users")
    func aTrailingSlashIsSignificant() async throws {
        // GIVEN a stub for /v1/users only
        let server = MockServer()
        server.stub(.get, "/v1/users", .status(200))
        // WHEN the app asks with a stray slash, and without
        let withSlash = try await Self.status(of: "https://api.example.com/v1/users/", on: server)
        let without = try await Self.status(of: "https://api.example.com/v1/users", on: server)
        // THEN only the exact path is answered by the stub; the other gets the mock's 404
        #expect(withSlash == 404)
        #expect(without == 200)
    }

    @Test("a stub registered with a trailing slash matches only that")
    func aStubWithATrailingSlashMatchesOnlyThat() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/", .status(200))
        #expect(try await Self.status(of: "https://api.example.com/v1/users/", on: server) == 200)
        #expect(try await Self.status(of: "https://api.example.com/v1/users", on: server) == 404)
    }

    @Test("an encoded slash (%2F) is not a path separator: each matches only its own stub (RFC 3986 §2.2)")
    func anEncodedSlashIsNotASlash() async throws {
        // GIVEN one stub for a segment holding an encoded slash, another for two segments
        let server = MockServer()
        server.stub(.get, "/v1/files/a%2Fb", .status(201))
        server.stub(.get, "/v1/files/a/b", .status(202))
        // WHEN each is asked for
        // THEN each reaches its own stub (hex digits' case does not matter, RFC 3986 §6.2.2.1)
        #expect(try await Self.status(of: "https://api.example.com/v1/files/a%2Fb", on: server) == 201)
        #expect(try await Self.status(of: "https://api.example.com/v1/files/a%2fb", on: server) == 201)
        #expect(try await Self.status(of: "https://api.example.com/v1/files/a/b", on: server) == 202)
        #expect(server.requests.map(\.percentEncodedPath) == ["/v1/files/a%2Fb", "/v1/files/a%2fb", "/v1/files/a/b"])
    }

    @Test("a stub path with characters a path cannot carry as they are matches their percent-encoded form")
    func aStubPathIsEncodedLikeTheWire() async throws {
        // GIVEN stubs written as a person reads them
        let server = MockServer()
        server.stub(.get, "/v1/caf\u{E9}/a b", .status(200))
        // WHEN the app sends the encoded path (as every URL on the wire is)
        // THEN the stub answers it; an encoded unreserved character is the same path (RFC 3986 §6.2.2.2)
        #expect(try await Self.status(of: "https://api.example.com/v1/caf%C3%A9/a%20b", on: server) == 200)
        #expect(try await Self.status(of: "https://api.example.com/v1/caf%c3%a9/%61%20b", on: server) == 200)
    }

    @Test("a stub written like an endpoint's literal path with a '%' matches the path the endpoint sends (%25)")
    func aLiteralPercentInAStubIsAPercent() async throws {
        // GIVEN a stub for a path holding a literal '%' that starts no escape, as an endpoint's path would
        let server = MockServer()
        server.stub(.get, "/v1/search/50%off", .status(200))
        // WHEN the endpoint sends it (Endpoint paths are literal: its '%' goes on the wire as %25)
        let sent = try await server.makeProvider().response(PathEndpoint(path: "/search/50%off"))
        // THEN the stub answers it
        #expect(sent.statusCode == 200)
        #expect(server.requests.map(\.percentEncodedPath) == ["/v1/search/50%25off"])
    }

    @Test("requests(_:_:) and nextRequest(matching:) match paths the same way")
    func theLookupsMatchTheSameWay() async throws {
        // GIVEN requests for /v1/users/ and /v1/users
        let server = MockServer()
        server.stub(handler: { _ in .status(200) })
        _ = try await Self.status(of: "https://api.example.com/v1/users/", on: server)
        _ = try await Self.status(of: "https://api.example.com/v1/users", on: server)
        // THEN each lookup finds only its own
        #expect(server.requests(.get, "/v1/users").map(\.percentEncodedPath) == ["/v1/users"])
        #expect(server.requests(.get, "/v1/users/").map(\.percentEncodedPath) == ["/v1/users/"])
        let next = try await server.nextRequest(matching: .get, "/v1/users")
        #expect(next.percentEncodedPath == "/v1/users")
    }

    @Test("an endpoint's path reaches the stub exactly as the provider sends it")
    func anEndpointWithAStraySlashIsNotAnsweredByTheStubWithout() async throws {
        // GIVEN a stub for /v1/start and an endpoint whose path has a stray trailing slash
        let server = MockServer()
        server.stub(.get, "/v1/start", .json(raw: "{}"))
        // WHEN it is called
        // THEN it fails as production would (the mock's 404), and the recording says which path was sent
        await #expect(throws: NetworkError.invalidStatusCode(404)) {
            try await server.makeProvider().response(RedirectingEndpoint(path: "/start/", method: .get))
        }
        #expect(server.requests.map(\.percentEncodedPath) == ["/v1/start/"])
    }
}

/// A GET of a literal `path` under `https://api.example.com/v1`.
private struct PathEndpoint: Endpoint {
    let path: String
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
}
