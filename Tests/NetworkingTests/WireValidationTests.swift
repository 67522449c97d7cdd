import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the app controls that would corrupt the HTTP message is refused before anything is sent.
@Suite("Wire validation")
struct WireValidationTests {
    func expectRefused(
        _ endpoint: TestEndpoint, interceptor: (any RequestInterceptor)? = nil, field: String,
        hiding secret: String? = nil
    ) async {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(200))
        await #expect {
            try await server.makeProvider(interceptor: interceptor).response(endpoint)
        } throws: { error in
            guard case NetworkError.invalidRequest(let named, _) = error else { return false }
            return named.contains(field) && secret.map { !"\(error)".contains($0) } ?? true
        }
        #expect(server.requests.isEmpty)
    }

    @Test(arguments: ["GET\r\nX-Injected: 1", "GET /admin HTTP/1.1\r\n", "", "GE T", "G\0T"])
    func aMethodThatIsNotATokenIsRefused(_ method: String) async {
        await expectRefused(TestEndpoint(method: HTTPMethod(rawValue: method)), field: "method")
    }

    @Test(arguments: ["a\r\nX-Injected: 1", "line\nbreak", "nul\0byte", "bell\u{7}", "del\u{7F}"])
    func aHeaderValueWithControlCharactersIsRefusedWithoutShowingIt(_ value: String) async {
        let secret = "s3cr3t-" + value
        await expectRefused(TestEndpoint(headers: ["X-Api-Key": secret]), field: "X-Api-Key", hiding: "s3cr3t")
    }

    @Test func aHeaderAnAdapterSetNeverReachesTheWireWithALineBreak() async throws {
        // GIVEN an adapter that sets a header value with CR LF
        let adapter = Interceptor(adapters: [
            ClosureAdapter { request, _ in
                var request = request
                request.setValue("token\r\nX-Evil: 1", forHTTPHeaderField: "X-Token")
                return request
            }
        ])
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .status(200))
        // WHEN it is sent: refused by the provider (Apple platforms), or dropped by URLRequest itself (Linux)
        do {
            _ = try await server.makeProvider(interceptor: adapter).response(TestEndpoint())
        } catch NetworkError.invalidRequest(let field, _) {
            #expect(field.contains("X-Token"))
        }
        // THEN no request carried it
        #expect(server.requests.allSatisfy { $0.header("X-Token") == nil && $0.header("X-Evil") == nil })
    }

    @Test func anAccessTokenWithALineBreakIsRefusedOnEveryPlatformWithoutShowingIt() async throws {
        // GIVEN a credential whose access token a hostile refresh answer filled with CR LF
        let credential = Credential(accessToken: "t0ken\r\nX-Evil: 1", refreshToken: "refresh")
        let auth = AuthInterceptor(baseURL: try #require(URL(string: "https://api.example.com")), store: InMemoryCredentialStore(credential)) {
            old, _ in old
        }
        // WHEN a call needs it / THEN it is refused before sending, naming the header and not the token
        // (Linux's URLRequest.setValue would have dropped the header without a word and sent the call)
        await expectRefused(TestEndpoint(), interceptor: auth, field: "Authorization", hiding: "t0ken")
    }

    @Test func aHeaderNameAnAdapterSetIsCheckedToo() async {
        let adapter = Interceptor(adapters: [
            ClosureAdapter { request, _ in
                var request = request
                request.setValue("v", forHTTPHeaderField: "X Bad")
                return request
            }
        ])
        await expectRefused(TestEndpoint(), interceptor: adapter, field: "header name")
    }

    @Test func aBodysContentTypeIsCheckedToo() async {
        await expectRefused(
            TestEndpoint(method: .post, body: .data(Data([1]), contentType: "text/plain\r\nX-Evil: 1")),
            field: "content type", hiding: "X-Evil")
    }

    @Test func theErrorNamesAHeaderOnlyUpToItsFirstBadByte() async {
        await expectRefused(TestEndpoint(headers: ["Authorization: Bearer sk_live_x": ""]), field: "Authorization", hiding: "sk_live")
    }

    @Test func anAdaptedMethodIsCheckedToo() async {
        let adapter = Interceptor(adapters: [
            ClosureAdapter { request, _ in
                var request = request
                request.httpMethod = "GET /x HTTP/1.1\r\nHost: evil"
                return request
            }
        ])
        await expectRefused(TestEndpoint(), interceptor: adapter, field: "method")
    }

    @Test(arguments: ["X Bad", "X:Bad", "Bad\r\nName", "(paren)"])
    func aHeaderNameThatIsNotATokenIsRefused(_ name: String) async {
        await expectRefused(TestEndpoint(headers: [name: "v"]), field: "header name")
    }

    @Test func ordinaryMethodsAndHeadersPass() async throws {
        let server = MockServer()
        server.stub("PURGE", "/v1/users/1", .status(200))
        let endpoint = TestEndpoint(method: "PURGE", headers: ["X-Name": "Kim \u{D55C}\u{AE00}\ttab", "Accept": "*/*"])
        #expect(try await server.makeProvider().response(endpoint).statusCode == 200)
    }

    @Test(arguments: [Double.nan, 0, -1, -Double.infinity])
    func aTimeoutThatIsNotPositiveIsRefused(_ timeout: Double) async {
        await expectRefused(TestEndpoint(timeout: timeout), field: "timeout")
    }

    @Test(arguments: [Double.infinity, 1e300, Double.greatestFiniteMagnitude, 1e6])
    func aHugeTimeoutIsClampedToADay(_ timeout: Double) throws {
        #expect(try TestEndpoint(timeout: timeout).urlRequest().timeoutInterval == 86_400)
    }

    @Test(arguments: [(0.5, 1.0), (1.0, 1.0), (1.2, 2.0), (30.0, 30.0)])
    func aFractionalTimeoutIsRoundedUpToWholeSecondsOnEveryPlatform(_ timeout: Double, expected: Double) throws {
        // GIVEN an endpoint with a fractional timeout; WHEN it is built; THEN the request waits whole seconds (Linux truncates)
        #expect(try TestEndpoint(timeout: timeout).urlRequest().timeoutInterval == expected)
    }
}
