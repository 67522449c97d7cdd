import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where redirects meet the rest: downloads and streams that accept a 3xx, a token refresh, cancellation,
/// modifiers, session-wide headers and request forgery through a detour.
@Suite("Redirect edges")
struct RedirectEdgeTests {
    static let stop = RedirectBehavior.modify { _, _ in nil }

    @Test func aDownloadOrAStreamThatAcceptsARedirectItStopsAtEndsAsThatRedirect() async throws {
        // GIVEN an endpoint that accepts 302, and a modifier that stops at every hop
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = MockServer()
        server.stub(.get, "/v1/start", MockResponse(statusCode: 302, headers: ["Location": "https://cdn.example.net/x"], body: Data("moved".utf8)))
        let endpoint = RedirectingEndpoint(method: .get, acceptableStatusCodes: [200, 302], redirectBehavior: Self.stop)
        let destination = folder.appendingPathComponent("file.bin")
        // WHEN it is downloaded and streamed
        let downloaded = try await server.makeProvider().download(endpoint, to: destination)
        let stream = try await server.makeProvider().stream(endpoint)
        var streamed = Data()
        for try await chunk in stream { streamed.append(chunk) }
        // THEN both end as the 302 (no fileWriteFailed), the destination is untouched, the stream has its body
        #expect(downloaded.statusCode == 302)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(stream.response.statusCode == 302 && streamed == Data("moved".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func a401FromAnotherOriginInScopeThatTheTokenWasNotSentToRefreshesNothing() async throws {
        // GIVEN an interceptor whose scope includes an upload host, and an API that redirects there,
        // where the hop (another origin) carries no token and is answered 401
        let server = MockServer()
        server.stub { request in
            request.url.host == "api.example.com"
                ? .status(302, headers: ["Location": "https://uploads.example.com/u/1"]) : .status(request.header("Authorization") == nil ? 401 : 200)
        }
        let refreshes = Recorder<Int>()
        let auth = AuthInterceptor(
            baseURL: URL(string: "https://api.example.com")!, additionalScope: [URL(string: "https://uploads.example.com")!],
            store: InMemoryCredentialStore(Credential(accessToken: "good", refreshToken: "r"))
        ) { credential, _ in
            refreshes.append(1)
            return credential
        }
        // WHEN the call is made
        // THEN the 401 is the answer, and no refresh was spent on it
        await #expect(throws: NetworkError.invalidStatusCode(401)) {
            try await server.makeProvider(interceptor: auth).response(RedirectingEndpoint(method: .get))
        }
        #expect(refreshes.count == 0)
        #expect(server.requests.count == 2)
    }

    @Test func cancellingWhileAModifierRunsSendsNoFurtherHop() async throws {
        // GIVEN a POST redirected with a 307 within its origin, and a modifier that waits until told
        let server = MockServer()
        server.stub(.post, "/v1/start", .status(307, headers: ["Location": "/v1/landing"]))
        server.stub(.post, "/v1/landing", .status(200))
        let entered = Signal()
        let release = Signal()
        let waiting = RedirectBehavior.modify { next, _ in
            entered.fire()
            await release.wait()
            return next
        }
        let provider = server.makeProvider()
        let call = Task {
            try await provider.response(RedirectingEndpoint(body: .data(Data("abc".utf8), contentType: "text/plain"), redirectBehavior: waiting))
        }
        // WHEN the caller cancels while the modifier decides
        await entered.wait()
        call.cancel()
        release.fire()
        // THEN the call ends cancelled, and the body was never sent again
        await #expect(throws: NetworkError.cancelled) { try await call.value }
        #expect(server.requests.map(\.path) == ["/v1/start"])
    }

    @Test func aModifierIsNotAskedPastTheHopLimit() async throws {
        // GIVEN a redirect loop, and a modifier that counts its calls
        let server = MockServer()
        server.stub { request in .status(302, headers: ["Location": request.url.absoluteString]) }
        let calls = Recorder<Int>()
        let counting = RedirectBehavior.modify { next, _ in
            calls.append(1)
            return next
        }
        // WHEN a call is made
        await #expect(throws: NetworkError.transportFailed(URLError(.httpTooManyRedirects))) {
            try await server.makeProvider().response(RedirectingEndpoint(method: .get, redirectBehavior: counting))
        }
        // THEN the modifier decided the 16 hops that were sent, and no 17th
        #expect(calls.count == 16 && server.requests.count == 17)
    }

    @Test func aSlowModifierEndsAtTheDeadlineInsteadOfSendingTheHop() async throws {
        // GIVEN a 1 s deadline and a modifier that takes 1.5 s
        let server = Self.serverRedirectingTo("/v1/landing")
        let slow = RedirectBehavior.modify { next, _ in
            try await Task.sleep(nanoseconds: 1_500_000_000)
            return next
        }
        // WHEN the call is made, THEN it ends at the deadline and the hop is never sent
        await #expect(throws: NetworkError.deadlineExceeded(seconds: 1)) {
            try await server.makeProvider().response(RedirectingEndpoint(method: .get, redirectBehavior: slow, deadline: 1))
        }
        #expect(server.requests.count == 1)
    }

    @Test func anUnsafeMethodThatLeftTheOriginComesBackWithoutTheToken() async throws {
        // GIVEN a DELETE the API redirects to a CDN, which redirects it back to another API path
        let server = MockServer()
        server.stub { request in
            switch (request.url.host ?? "", request.path) {
            case ("api.example.com", "/v1/start"): return .status(302, headers: ["Location": "https://cdn.example.net/x"])
            case ("cdn.example.net", _): return .status(307, headers: ["Location": "https://api.example.com/v1/account"])
            default: return .status(204)
            }
        }
        let provider = server.makeProvider(interceptor: HeaderAdapter(name: "Authorization", value: "Bearer secret-token"))
        // WHEN the DELETE is sent
        _ = try? await provider.response(RedirectingEndpoint(method: .delete))
        // THEN the account was never reached with the token (a detour cannot forge an authenticated DELETE)
        let account = server.requests.filter { $0.path == "/v1/account" }
        #expect(account.count == 1)
        #expect(account.allSatisfy { $0.method == "DELETE" && $0.header("Authorization") == nil })
    }

    @Test func headersTheSessionConfigurationAddsFollowTheOriginRules() async throws {
        // GIVEN a session configuration that adds a credential and a language to every request
        let server = Self.serverRedirectingTo("https://cdn.example.net/x")
        let configuration = server.makeConfiguration()
        configuration.httpAdditionalHeaders = ["X-Api-Key": "config-key", "Accept-Language": "ko"]
        let provider = NetworkProvider(configuration: configuration, interceptor: ServerRouter(server: server))
        // WHEN a call is redirected to another origin
        _ = try await provider.response(RedirectingEndpoint(method: .get, headers: ["Accept-Language": "de"]))
        // THEN the API got the key and the endpoint's language (it wins), the CDN only the language
        let (api, cdn) = (server.requests[0], server.requests[1])
        #expect(api.header("X-Api-Key") == "config-key" && api.header("Accept-Language") == "de")
        #expect(cdn.header("X-Api-Key") == nil && cdn.header("Accept-Language") == "de")
        // AND the caller's configuration was not changed
        #expect(configuration.httpAdditionalHeaders?["X-Api-Key"] as? String == "config-key")
    }

    @Test(arguments: ["/a b", "/caf\u{E9}", "/x?q=\"quoted\"", "/{braces}|pipe"])
    func aLocationWithSpacesOrNonASCIIIsFollowedEncoded(_ location: String) async throws {
        // GIVEN a redirect whose Location a strict parser (older Apple platforms) would refuse as it is
        let server = Self.serverRedirectingTo(location)
        // WHEN the call is made
        let response = try await server.makeProvider().response(RedirectingEndpoint(method: .get))
        // THEN it is followed, percent-encoded, the same way on every platform
        #expect(response.statusCode == 200)
        let hop = try #require(server.requests.last)
        #expect(hop.url.absoluteString.hasPrefix("https://api.example.com/"))
        #expect(!hop.url.absoluteString.contains(" ") && hop.url.absoluteString.allSatisfy(\.isASCII))
    }

    static func serverRedirectingTo(_ location: String) -> MockServer {
        let server = MockServer()
        server.stub { request in request.path == "/v1/start" ? .status(302, headers: ["Location": location]) : .json(raw: "{}") }
        return server
    }
}
