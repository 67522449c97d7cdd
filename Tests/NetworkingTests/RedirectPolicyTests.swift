import Foundation
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The redirect rules as one pure function: the tables in Docs/Redirects.md, row by row.
@Suite("Redirect rules")
struct RedirectPolicyTests {
    /// A request with a body and every kind of header, as the endpoint and an interceptor set it.
    static func original(_ url: String = "https://api.example.com/v1/upload", method: String = "POST", body: Bool = true) -> URLRequest {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        if body { request.httpBody = Data(#"{"card":"4111"}"#.utf8) }
        for (name, value) in [
            "Accept": "application/json", "Accept-Language": "de", "Accept-Encoding": "gzip", "User-Agent": "App/1",
            "Content-Type": "application/json", "Content-Length": "15", "X-Api-Key": "api-15-secret", "Authorization": "Bearer t15",
            "Cookie": "c=15", "X-Trace": "trace-15",
        ] { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    static func decide(
        _ status: Int, to location: String?, from current: URLRequest, attempt: URLRequest? = nil, adapted: Set<String> = [],
        fileBody: Bool = false, allowsInsecure: Bool = false
    ) -> RedirectPolicy.Decision {
        RedirectPolicy.decision(
            statusCode: status, location: location, current: current, chain: RedirectChain(attempt: attempt ?? current, adaptedHeaders: adapted),
            hasBody: fileBody || RedirectPolicy.hasBody(current), allowsInsecure: allowsInsecure)
    }

    static func followed(_ decision: RedirectPolicy.Decision) -> (request: URLRequest, keepsBody: Bool)? {
        guard case .follow(let next, let keepsBody) = decision else { return nil }
        return (next, keepsBody)
    }

    // MARK: Method and body, same origin

    @Test(
        "method and body per status (RFC 9110 §15.4)",
        arguments: [
            // status, method, next method, body kept
            (301, "POST", "GET", false), (302, "POST", "GET", false), (303, "POST", "GET", false), (307, "POST", "POST", true),
            (308, "POST", "POST", true), (301, "PUT", "PUT", true), (302, "PUT", "PUT", true), (302, "PATCH", "PATCH", true),
            (302, "DELETE", "DELETE", true), (303, "PUT", "GET", false), (303, "HEAD", "HEAD", false), (307, "PUT", "PUT", true),
            (308, "DELETE", "DELETE", true),
        ])
    func methodAndBody(status: Int, method: String, nextMethod: String, keepsBody: Bool) throws {
        // GIVEN a request with a body, redirected within its origin
        let request = Self.original(method: method)
        // WHEN the rules decide
        let next = try #require(Self.followed(Self.decide(status, to: "/v2/upload", from: request)))
        // THEN the method and body are as RFC 9110 says, and a dropped body takes its header fields along
        #expect(next.request.httpMethod == nextMethod)
        #expect(next.keepsBody == keepsBody)
        #expect((next.request.httpBody != nil) == keepsBody)
        #expect((next.request.value(forHTTPHeaderField: "Content-Type") != nil) == keepsBody)
        #expect((next.request.value(forHTTPHeaderField: "Content-Length") != nil) == keepsBody)
        #expect(next.request.url?.absoluteString == "https://api.example.com/v2/upload")
        #expect(next.request.value(forHTTPHeaderField: "Authorization") == "Bearer t15")
    }

    @Test("a body sent from a file follows the same rules", arguments: [(302, false), (303, false), (307, true), (308, true)])
    func fileBody(status: Int, keepsBody: Bool) throws {
        // GIVEN a POST whose body is a file (not in the request)
        let request = Self.original(body: false)
        // WHEN it is redirected within its origin
        let next = try #require(Self.followed(Self.decide(status, to: "/v2/upload", from: request, fileBody: true)))
        // THEN the file goes along only where the method and body are kept, and its Content-Length with it
        #expect(next.keepsBody == keepsBody)
        #expect((next.request.value(forHTTPHeaderField: "Content-Length") != nil) == keepsBody)
    }

    // MARK: Origins

    @Test(
        "another origin gets only the safe headers and never a body",
        arguments: ["https://cdn.example.net/x", "https://api.example.com:8443/x", "https://API.example.com.evil.example/x"])
    func crossOrigin(to url: String) throws {
        // GIVEN a POST answered with a 303 to another origin (a GET without body)
        let request = Self.original()
        // WHEN the rules decide
        let next = try #require(Self.followed(Self.decide(303, to: url, from: request)))
        // THEN only Accept, Accept-Language, Accept-Encoding and User-Agent go there
        let names = Set((next.request.allHTTPHeaderFields ?? [:]).keys.map { $0.lowercased() })
        #expect(names == ["accept", "accept-language", "accept-encoding", "user-agent"])
        #expect(next.request.httpBody == nil)
    }

    @Test("a body to another origin is refused", arguments: [(307, "POST"), (308, "POST"), (301, "PUT"), (302, "PATCH"), (308, "DELETE")])
    func crossOriginBody(status: Int, method: String) {
        // GIVEN a request with a body (in memory, or from a file) redirected to another origin with a status that keeps it
        let inMemory = Self.original(method: method)
        let fromFile = Self.original(method: method, body: false)
        // WHEN the rules decide
        // THEN the hop is refused, naming the status
        #expect(Self.decide(status, to: "https://collector.example.org/x", from: inMemory) == .fail(.redirectWouldForwardBody(statusCode: status)))
        #expect(
            Self.decide(status, to: "https://collector.example.org/x", from: fromFile, fileBody: true)
                == .fail(.redirectWouldForwardBody(statusCode: status)))
    }

    @Test func aHeaderAnInterceptorSetNeverLeavesTheOrigin() throws {
        // GIVEN a GET whose User-Agent and a custom token header an interceptor set
        var request = Self.original(method: "GET", body: false)
        request.setValue("raw-token", forHTTPHeaderField: "accessToken")
        // WHEN it is redirected to another origin
        let next = try #require(Self.followed(Self.decide(302, to: "https://cdn.example.net/x", from: request, adapted: ["User-Agent", "accessToken"])))
        // THEN the interceptor's headers are gone, the endpoint's Accept stays
        #expect(next.request.value(forHTTPHeaderField: "User-Agent") == nil)
        #expect(next.request.value(forHTTPHeaderField: "accessToken") == nil)
        #expect(next.request.value(forHTTPHeaderField: "Accept") == "application/json")
    }

    @Test("after a foreign hop, only the exact URL the attempt started from gets its headers again (RFC 9110 §15.4)")
    func aHopBackToTheCallsOwnOriginCarriesItsHeadersOnlyToTheStartingURL() throws {
        // GIVEN an API request that went to a CDN (stripped)
        let attempt = Self.original("https://api.example.com/v1/a", method: "GET", body: false)
        let atCDN = try #require(Self.followed(Self.decide(302, to: "https://cdn.example.net/b", from: attempt))).request
        #expect(atCDN.value(forHTTPHeaderField: "Authorization") == nil)
        // WHEN the CDN redirects back to another API path, or to the one the attempt started from
        let other = try #require(Self.followed(Self.decide(302, to: "https://api.example.com/v1/c", from: atCDN, attempt: attempt))).request
        let same = try #require(Self.followed(Self.decide(302, to: "https://api.example.com/v1/a", from: atCDN, attempt: attempt))).request
        // THEN the other path gets only the safe headers; the starting URL its own headers (the token) again
        #expect(other.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(other.value(forHTTPHeaderField: "X-Api-Key") == nil)
        #expect(other.value(forHTTPHeaderField: "Accept") == "application/json")
        #expect(same.value(forHTTPHeaderField: "Authorization") == "Bearer t15")
        #expect(same.value(forHTTPHeaderField: "X-Api-Key") == "api-15-secret")
    }

    @Test("a chain that left the origin stays left: from the starting URL, another API path gets no token")
    func aChainThatLeftStaysLeft() throws {
        // GIVEN a chain that went A → CDN → A (the starting URL, authenticated again)
        let attempt = Self.original("https://api.example.com/v1/a", method: "GET", body: false)
        var chain = RedirectChain(attempt: attempt, adaptedHeaders: [])
        let atCDN = try #require(
            Self.followed(
                RedirectPolicy.decision(
                    statusCode: 302, location: "https://cdn.example.net/b", current: attempt, chain: chain, hasBody: false, allowsInsecure: false))
        ).request
        chain.didFollow(to: atCDN)
        let home = try #require(
            Self.followed(
                RedirectPolicy.decision(
                    statusCode: 302, location: "https://api.example.com/v1/a", current: atCDN, chain: chain, hasBody: false, allowsInsecure: false))
        ).request
        chain.didFollow(to: home)
        #expect(home.value(forHTTPHeaderField: "Authorization") == "Bearer t15")
        // WHEN the API then redirects within itself
        let moved = try #require(
            Self.followed(
                RedirectPolicy.decision(
                    statusCode: 302, location: "/v1/admin", current: home, chain: chain, hasBody: false, allowsInsecure: false))
        ).request
        // THEN that hop carries no token: the chain's detour could have aimed the first one
        #expect(moved.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test("a modifier that sends a same-origin hop elsewhere strips what the interceptors set, safe names included")
    func aModifiedHopIsJudgedWhereItGoes() throws {
        // GIVEN a same-origin hop of a GET whose User-Agent an interceptor set, and a modifier pointing it at a CDN
        let get = Self.original(method: "GET", body: false)
        let chain = RedirectChain(attempt: get, adaptedHeaders: ["User-Agent", "Authorization"])
        let proposed = try #require(
            Self.followed(
                RedirectPolicy.decision(
                    statusCode: 302, location: "/v2", current: get, chain: chain, hasBody: false, allowsInsecure: false))
        ).request
        #expect(proposed.value(forHTTPHeaderField: "User-Agent") == "App/1")
        var moved = proposed
        moved.url = URL(string: "https://cdn.example.net/x")!
        moved.setValue(nil, forHTTPHeaderField: "Accept-Language")
        // WHEN the rules check it
        let result = try #require(
            Self.followed(
                RedirectPolicy.checked(
                    moved, proposed: proposed, statusCode: 302, chain: chain, keepsBody: false, current: get, allowsInsecure: false))
        ).request
        // THEN neither the interceptor's User-Agent nor the token goes; the endpoint's Accept does, and
        // what the modifier removed stays off
        #expect(result.value(forHTTPHeaderField: "User-Agent") == nil)
        #expect(result.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(result.value(forHTTPHeaderField: "Accept") == "application/json")
        #expect(result.value(forHTTPHeaderField: "Accept-Language") == nil)
    }

    // MARK: Schemes, Location and fragments

    @Test(arguments: ["file:///etc/passwd", "data:text/plain,hello", "ftp://files.example.com/x", "javascript:alert(1)", "http:///nohost"])
    func aRedirectToAnotherSchemeIsNeverFollowed(_ target: String) {
        // GIVEN a GET redirected to something that is not an http or https URL with a host
        let request = Self.original(method: "GET", body: false)
        // WHEN the rules decide, THEN the call fails as an unsupported URL
        #expect(Self.decide(302, to: target, from: request, allowsInsecure: true) == .fail(.transportFailed(URLError(.unsupportedURL))))
    }

    @Test func httpsToHttpIsRefusedUnlessAllowed() throws {
        // GIVEN an https GET redirected to http
        let request = Self.original(method: "GET", body: false)
        // WHEN the rules decide, by default and with the provider's permission
        // THEN it is refused, typed; allowed, it is followed as another origin (safe headers only)
        #expect(Self.decide(301, to: "http://api.example.com/x", from: request) == .fail(.insecureRedirect(statusCode: 301)))
        let allowed = try #require(Self.followed(Self.decide(301, to: "http://api.example.com/x", from: request, allowsInsecure: true)))
        #expect(allowed.request.value(forHTTPHeaderField: "Authorization") == nil)
        // http → https is an upgrade: followed (another origin, so safe headers only)
        let plain = Self.original("http://api.example.com/a", method: "GET", body: false)
        #expect(Self.followed(Self.decide(301, to: "https://api.example.com/a", from: plain)) != nil)
    }

    @Test(
        "Location is resolved against the current URL; a missing fragment inherits the current one",
        arguments: [
            ("https://api.example.com/v1/a/b#frag", "c", "https://api.example.com/v1/a/c#frag"),
            ("https://api.example.com/v1/a/b", "../x?y=1", "https://api.example.com/v1/x?y=1"),
            ("https://api.example.com/v1/a#one", "/z#two", "https://api.example.com/z#two"),
            ("https://api.example.com/v1/a", "//cdn.example.net/p", "https://cdn.example.net/p"),
            ("https://api.example.com/v1/a#top", "https://other.example.org/q?x=1", "https://other.example.org/q?x=1#top"),
        ])
    func locationResolution(from: String, location: String, expected: String) throws {
        // GIVEN a GET at `from`
        let request = Self.original(from, method: "GET", body: false)
        // WHEN it is redirected to `location`
        let next = try #require(Self.followed(Self.decide(302, to: location, from: request)))
        // THEN the next URL is resolved as RFC 9110 says
        #expect(next.request.url?.absoluteString == expected)
    }

    @Test(arguments: ["/a\r\nSet-Cookie: x=1", "/a\u{0}b", "/tab\there"])
    func aLocationWithControlCharactersFailsTyped(_ location: String) {
        // GIVEN a redirect whose Location carries a control character; WHEN the rules decide; THEN a typed failure
        #expect(Self.decide(302, to: location, from: Self.original(method: "GET", body: false)) == .fail(.transportFailed(URLError(.badURL))))
    }

    @Test(
        "a 3xx that is not a redirect the provider follows is the answer",
        arguments: [(300, "/x" as String?), (304, "/x"), (305, "/x"), (302, nil), (302, ""), (200, "/x")])
    func notARedirect(status: Int, location: String?) {
        #expect(Self.decide(status, to: location, from: Self.original(method: "GET", body: false)) == .answer)
    }

    // MARK: A modifier's request

    @Test func aModifierCannotSendTheBodyOrTheTokenElsewhere() throws {
        // GIVEN a same-origin 307 of a POST, and a modifier that points it at another origin
        let request = Self.original()
        let proposed = try #require(Self.followed(Self.decide(307, to: "/v2", from: request)))
        var modified = proposed.request
        modified.url = URL(string: "https://elsewhere.example.org/x")!
        // WHEN the rules check what the modifier returned
        let checked = RedirectPolicy.checked(
            modified, proposed: proposed.request, statusCode: 307, chain: RedirectChain(attempt: request, adaptedHeaders: []), keepsBody: true,
            current: request, allowsInsecure: false)
        // THEN the body is refused there
        #expect(checked == .fail(.redirectWouldForwardBody(statusCode: 307)))
        // AND for a GET, the token is dropped while a header the modifier added itself goes along
        let get = Self.original(method: "GET", body: false)
        let proposedGet = try #require(Self.followed(Self.decide(302, to: "/v2", from: get)))
        var moved = proposedGet.request
        moved.url = URL(string: "https://elsewhere.example.org/x")!
        moved.setValue("yes", forHTTPHeaderField: "X-Chosen")
        let result = try #require(
            Self.followed(
                RedirectPolicy.checked(
                    moved, proposed: proposedGet.request, statusCode: 302, chain: RedirectChain(attempt: get, adaptedHeaders: []), keepsBody: false,
                    current: get, allowsInsecure: false)))
        #expect(result.request.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(result.request.value(forHTTPHeaderField: "X-Chosen") == "yes")
    }
}
